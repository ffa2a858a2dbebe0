import { type ProjectBackupInput, workflowInput } from '@signalbox/contracts';
import { AppError } from '../../lib/errors';
import { checkWorkflowGraph } from '../workflows';
import { invalid } from './backup-parse';
import { checkAs, REF } from './plan-checks';

/** A workflow to restore: its definition as checked, with templates by name and named approvers by username. */
export type PlannedWorkflow = {
  name: string;
  description: string;
  survey_vars: unknown[];
  nodes: Record<string, unknown>[];
  edges: unknown[];
};

/**
 * Checks each workflow of a backup as the workflow API would (its fields, then its graph), its template nodes naming
 * templates of the backup. Named approvers are resolved at restore time (only members of the new project count).
 */
export function planWorkflows(b: ProjectBackupInput, templateNames: Set<string>): PlannedWorkflow[] {
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
          const { template: _t, ...rest } = node;
          return { ...rest, template_id: REF };
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
        if (node.type === 'template') return { ...node, template: original?.template };
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
