import type { Workflow, WorkflowDefinition, WorkflowEdge, WorkflowNode } from '@signalbox/contracts';
import type { Selectable } from 'kysely';
import type { Db, Dialect } from '../../db';
import type { WorkflowTable } from '../../db/tables';
import { insertReturningId, now, parseJson } from '../../db/values';
import { templateSurveyVarsOf } from '../../tasks/run/survey-answers';

export type WorkflowRow = Selectable<WorkflowTable>;

/** The stored definition: a restored or older document reads with empty parts rather than failing. */
export function definitionOf(text: string): WorkflowDefinition {
  const doc = parseJson<Partial<WorkflowDefinition>>(text, {});
  return {
    survey_vars: Array.isArray(doc.survey_vars) ? doc.survey_vars : [],
    // Template nodes saved before the environment override read as having none.
    nodes: Array.isArray(doc.nodes)
      ? (doc.nodes as WorkflowNode[]).map((n) =>
          n.type === 'template' ? { ...n, environment_id: n.environment_id ?? null } : n,
        )
      : [],
    edges: Array.isArray(doc.edges) ? (doc.edges as WorkflowEdge[]) : [],
  };
}

export const definitionText = (d: WorkflowDefinition) =>
  JSON.stringify({ survey_vars: d.survey_vars, nodes: d.nodes, edges: d.edges });

type LastRun = { id: number; status: string; created: string } | null;

export function toWorkflow(row: WorkflowRow, lastRun: LastRun): Workflow {
  const d = definitionOf(row.definition);
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    survey_vars: templateSurveyVarsOf(d.survey_vars),
    nodes: d.nodes as Workflow['nodes'],
    edges: d.edges,
    created: row.created,
    updated: row.updated,
    last_run: lastRun,
  };
}

export function findWorkflowRow(db: Db, projectId: number, id: number) {
  return db
    .selectFrom('workflow')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function listWorkflowRows(db: Db, projectId: number) {
  return db.selectFrom('workflow').selectAll().where('project_id', '=', projectId).orderBy('name').execute();
}

/** The latest run of each of the workflows. */
export async function lastRunsOf(db: Db, workflowIds: number[]): Promise<Map<number, NonNullable<LastRun>>> {
  if (workflowIds.length === 0) return new Map();
  const latest = db
    .selectFrom('workflow_run')
    .select((eb) => ['workflow_id', eb.fn.max('id').as('id')])
    .where('workflow_id', 'in', workflowIds)
    .groupBy('workflow_id')
    .as('latest');
  const rows = await db
    .selectFrom('workflow_run')
    .innerJoin(latest, 'latest.id', 'workflow_run.id')
    .select(['workflow_run.workflow_id', 'workflow_run.id', 'workflow_run.status', 'workflow_run.created'])
    .execute();
  return new Map(rows.map((r) => [r.workflow_id, { id: r.id, status: r.status, created: r.created }]));
}

export type WorkflowValues = { name: string; description: string; definition: WorkflowDefinition };

export function insertWorkflowRow(db: Db, dialect: Dialect, projectId: number, values: WorkflowValues) {
  const at = now();
  return insertReturningId(db, dialect, 'workflow', {
    project_id: projectId,
    name: values.name,
    description: values.description,
    definition: definitionText(values.definition),
    created: at,
    updated: at,
  });
}

export async function updateWorkflowRow(db: Db, projectId: number, id: number, values: WorkflowValues) {
  await db
    .updateTable('workflow')
    .set({
      name: values.name,
      description: values.description,
      definition: definitionText(values.definition),
      updated: now(),
    })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .execute();
}

export async function deleteWorkflowRow(db: Db, projectId: number, id: number) {
  await db.deleteFrom('workflow').where('project_id', '=', projectId).where('id', '=', id).execute();
}

/** Whether another workflow of the project has this name (compared trimmed, without regard to case). */
export async function workflowNameTaken(db: Db, projectId: number, name: string, exceptId?: number) {
  const rows = await db
    .selectFrom('workflow')
    .select(['id', 'name'])
    .where('project_id', '=', projectId)
    .execute();
  const wanted = name.trim().toLowerCase();
  return rows.some((r) => r.id !== exceptId && r.name.trim().toLowerCase() === wanted);
}

/** The schedules and integrations that start the workflow, by name. */
export async function workflowStarters(db: Db, projectId: number, id: number): Promise<string[]> {
  const schedules = await db
    .selectFrom('schedule')
    .select('name')
    .where('project_id', '=', projectId)
    .where('workflow_id', '=', id)
    .execute();
  const integrations = await db
    .selectFrom('integration')
    .select('name')
    .where('project_id', '=', projectId)
    .where('workflow_id', '=', id)
    .execute();
  return [...schedules.map((s) => s.name || 'schedule'), ...integrations.map((i) => i.name)];
}
