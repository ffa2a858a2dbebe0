import { coded, type WorkflowInput } from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { recordNamedEvent } from '../../audit/audit.store';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { conflict, fieldError, notFound } from '../../lib/errors';
import { checkGraph, checkReferences } from './definition-check';
import {
  deleteWorkflowRow,
  findWorkflowRow,
  insertWorkflowRow,
  lastRunsOf,
  listWorkflowRows,
  toWorkflow,
  updateWorkflowRow,
  type WorkflowValues,
  workflowNameTaken,
  workflowStarters,
} from './workflows.store';

type Db = Pick<Deps, 'db'>;

export async function requireWorkflow(deps: Db, projectId: number, id: number) {
  const row = await findWorkflowRow(deps.db, projectId, id);
  if (!row) throw notFound('workflow');
  return row;
}

export async function listWorkflows(deps: Db, projectId: number) {
  const rows = await listWorkflowRows(deps.db, projectId);
  const last = await lastRunsOf(
    deps.db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toWorkflow(r, last.get(r.id) ?? null));
}

export async function getWorkflow(deps: Db, projectId: number, id: number) {
  const row = await requireWorkflow(deps, projectId, id);
  return toWorkflow(row, (await lastRunsOf(deps.db, [id])).get(id) ?? null);
}

/** Checks a definition in full (graph, then what it names in the project) and returns what is stored. */
async function checked(deps: Db, projectId: number, input: WorkflowInput, exceptId?: number) {
  if (input.project_id !== undefined && input.project_id !== null && input.project_id !== projectId)
    throw fieldError('project_id', coded('project_id_mismatch'));
  if (exceptId !== undefined && input.id !== undefined && input.id !== null && input.id !== exceptId)
    throw fieldError('id', coded('object_id_mismatch'));
  const definition = { survey_vars: input.survey_vars, nodes: input.nodes, edges: input.edges };
  checkGraph(definition);
  await checkReferences(deps.db, projectId, definition);
  if (await workflowNameTaken(deps.db, projectId, input.name, exceptId))
    throw fieldError('name', coded('workflow_name_taken'));
  return { name: input.name, description: input.description, definition } satisfies WorkflowValues;
}

const named = (id: number, name: string, action: 'created' | 'updated' | 'deleted') => ({
  type: 'workflow',
  label: 'Workflow',
  id,
  name,
  action,
});

export async function createWorkflow(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: UserRow,
  projectId: number,
  input: WorkflowInput,
) {
  const values = await checked(deps, projectId, input);
  const id = await transaction(deps.db, async (trx) => {
    const id = await insertWorkflowRow(trx, deps.dialect, projectId, values);
    await recordNamedEvent(trx, user, projectId, named(id, values.name, 'created'));
    return id;
  });
  return getWorkflow(deps, projectId, id);
}

/** Changes a workflow; runs already started keep the definition they started with. */
export async function updateWorkflow(
  deps: Db,
  user: UserRow,
  projectId: number,
  id: number,
  input: WorkflowInput,
) {
  await requireWorkflow(deps, projectId, id);
  const values = await checked(deps, projectId, input, id);
  await transaction(deps.db, async (trx) => {
    await updateWorkflowRow(trx, projectId, id, values);
    await recordNamedEvent(trx, user, projectId, named(id, values.name, 'updated'));
  });
  return getWorkflow(deps, projectId, id);
}

/** Deletes a workflow no schedule or integration starts; its runs stay in the history. */
export async function deleteWorkflow(deps: Db, user: UserRow, projectId: number, id: number) {
  const row = await requireWorkflow(deps, projectId, id);
  const starters = await workflowStarters(deps.db, projectId, id);
  if (starters.length > 0) throw conflict(coded('workflow_in_use', { names: starters.join(', ') }));
  await transaction(deps.db, async (trx) => {
    await deleteWorkflowRow(trx, projectId, id);
    await recordNamedEvent(trx, user, projectId, named(id, row.name, 'deleted'));
  });
}
