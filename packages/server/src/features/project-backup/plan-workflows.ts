import { type ProjectBackupInput, workflowInput } from '@signalbox/contracts';
import { AppError } from '../../lib/errors';
import { checkWorkflowGraph } from '../workflows';
import { invalid } from './backup-parse';
import { assertRef, checkAs, REF } from './plan-checks';

/**
 * A workflow to restore: its definition as checked, with templates (and the inventories and environments template
 * nodes fix) by name and named approvers by username.
 */
export type PlannedWorkflow = {
  name: string;
  description: string;
  survey_vars: unknown[];
  nodes: Record<string, unknown>[];
  edges: unknown[];
};

/** The overrides of a template node that name an object of the project: by name in a backup. */
const namedOverrides = [
  { field: 'inventory_id', key: 'inventory', what: 'inventory', list: 'inventories' },
  { field: 'environment_id', key: 'environment', what: 'environment', list: 'environments' },
] as const;

const isFixed = (source: unknown) =>
  !!source && typeof source === 'object' && (source as { from?: unknown }).from === 'fixed';

/**
 * Checks each workflow of a backup as the workflow API would (its fields, then its graph), its template nodes naming
 * templates, inventories and environments of the backup. A fixed inventory or environment the backup does not name
 * is left out (its id was the old project's). Named approvers are resolved at restore time (only members of the new
 * project count).
 */
export function planWorkflows(
  b: ProjectBackupInput,
  n: { templateNames: Set<string>; inventoryNames: Set<string>; environmentNames: Set<string> },
): PlannedWorkflow[] {
  const { templateNames } = n;
  const namesOf = { inventory: n.inventoryNames, environment: n.environmentNames };
  const seen = new Set<string>();
  return (b.workflows ?? []).map((w, i) => {
    const where = `workflows[${i}]`;
    if (seen.has(w.name.toLowerCase())) throw invalid(`${where}.name`, `workflow "${w.name}" appears twice`);
    seen.add(w.name.toLowerCase());
    const nodes = w.nodes.map((node, j) => {
      if (node.type === 'template') {
        const template = node.template;
        if (typeof template !== 'string' || !templateNames.has(template))
          throw invalid(
            `${where}.nodes[${j}].template`,
            `template "${String(template)}" is not in templates`,
          );
        for (const o of namedOverrides) {
          const named = node[o.key];
          if (named != null && typeof named !== 'string')
            throw invalid(`${where}.nodes[${j}].${o.key}`, `${o.key} must be a name`);
          if (isFixed(node[o.field]))
            assertRef(`${where}.nodes[${j}].${o.key}`, o.what, o.list, namesOf[o.key], named ?? null);
        }
      }
      return node;
    });
    // The API's own checks, each reference by a stand-in id.
    const asInput = {
      name: w.name,
      description: w.description,
      survey_vars: w.survey_vars,
      nodes: nodes.map((node) => {
        if (node.type === 'template') {
          const { template: _t, inventory: _i, environment: _e, ...rest } = node;
          const fixed = Object.fromEntries(
            namedOverrides.flatMap((o) =>
              isFixed(node[o.field]) ? [[o.field, node[o.key] ? { from: 'fixed', value: REF } : null]] : [],
            ),
          );
          return { ...rest, ...fixed, template_id: REF };
        }
        if (node.type === 'approval') {
          const { users: _u, ...rest } = node;
          return { ...rest, user_ids: [] };
        }
        return node;
      }),
      edges: w.edges,
    };
    const input = checkAs(workflowInput, asInput, where);
    try {
      checkWorkflowGraph({ survey_vars: input.survey_vars, nodes: input.nodes, edges: input.edges });
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 400) throw invalid(where, err.message);
      throw err;
    }
    return {
      name: w.name,
      description: input.description,
      survey_vars: input.survey_vars,
      nodes: input.nodes.map((node, j) => {
        const original = nodes[j];
        if (node.type === 'template') {
          const named = Object.fromEntries(
            namedOverrides.flatMap((o) =>
              node[o.field]?.from === 'fixed' ? [[o.key, original?.[o.key]]] : [],
            ),
          );
          return { ...node, template: original?.template, ...named };
        }
        if (node.type === 'approval')
          return {
            ...node,
            users: Array.isArray(original?.users) ? original.users.filter((u) => typeof u === 'string') : [],
          };
        return node;
      }) as Record<string, unknown>[],
      edges: input.edges,
    };
  });
}
