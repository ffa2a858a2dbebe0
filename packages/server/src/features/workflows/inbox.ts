import { type ApprovalInboxItem, can, type ProjectRole, rolePermissions } from '@signalbox/contracts';
import type { Deps } from '../../deps';
import { mayApprove } from './approvals.service';
import { userNames } from './runs.store';
import { definitionOf } from './workflows.store';

const empty = {
  task_id: null,
  template_name: null,
  run_id: null,
  workflow_id: null,
  workflow_name: null,
  node_id: null,
  node_name: null,
  input_digest: null,
  approvals_required: null,
  approvals_given: null,
  timeout_at: null,
};

/**
 * What waits for a user's decision across the projects they are a member of: tasks AI agents started that wait for
 * approval (where the user may run tasks, as approving them needs) and workflow approval nodes the user may approve
 * and has not answered for their current inputs. Oldest first.
 */
export async function approvalInbox(deps: Pick<Deps, 'db'>, userId: number): Promise<ApprovalInboxItem[]> {
  const memberships = await deps.db
    .selectFrom('project_user')
    .innerJoin('project', 'project.id', 'project_user.project_id')
    .select(['project_user.project_id', 'project_user.role', 'project.name'])
    .where('project_user.user_id', '=', userId)
    .execute();
  if (memberships.length === 0) return [];
  const projectName = new Map(memberships.map((m) => [m.project_id, m.name]));
  const runners = memberships
    .filter((m) => can(rolePermissions[m.role as ProjectRole] ?? 0, 'runProjectTasks'))
    .map((m) => m.project_id);
  const items: ApprovalInboxItem[] = [];

  if (runners.length > 0) {
    const tasks = await deps.db
      .selectFrom('task')
      .innerJoin('template', 'template.id', 'task.template_id')
      .leftJoin('user', 'user.id', 'task.user_id')
      .select([
        'task.id',
        'task.project_id',
        'task.created',
        'task.message',
        'template.name as template_name',
        'user.name as user_name',
      ])
      .where('task.status', '=', 'waiting_approval')
      .where('task.project_id', 'in', runners)
      .execute();
    for (const t of tasks)
      items.push({
        ...empty,
        kind: 'task',
        project_id: t.project_id,
        project_name: projectName.get(t.project_id) ?? '',
        since: t.created,
        message: t.message,
        started_by: t.user_name ?? null,
        task_id: t.id,
        template_name: t.template_name,
      });
  }

  const waiting = await deps.db
    .selectFrom('workflow_run_node')
    .innerJoin('workflow_run', 'workflow_run.id', 'workflow_run_node.run_id')
    .select([
      'workflow_run.id as run_id',
      'workflow_run.project_id',
      'workflow_run.workflow_id',
      'workflow_run.workflow_name',
      'workflow_run.user_id',
      'workflow_run.definition',
      'workflow_run_node.node_id',
      'workflow_run_node.start',
      'workflow_run_node.wait_until',
      'workflow_run_node.input_digest',
    ])
    .where('workflow_run_node.status', '=', 'waiting_approval')
    .where(
      'workflow_run.project_id',
      'in',
      memberships.map((m) => m.project_id),
    )
    .execute();
  if (waiting.length > 0) {
    const answers = await deps.db
      .selectFrom('workflow_approval')
      .select(['run_id', 'node_id', 'user_id', 'digest', 'decision'])
      .where(
        'run_id',
        'in',
        waiting.map((w) => w.run_id),
      )
      .execute();
    const names = await userNames(deps.db, [
      ...new Set(waiting.flatMap((w) => (w.user_id ? [w.user_id] : []))),
    ]);
    for (const w of waiting) {
      const node = definitionOf(w.definition).nodes.find((n) => n.id === w.node_id);
      if (node?.type !== 'approval') continue;
      if ((await mayApprove(deps, w, node, userId)) !== 'yes') continue;
      const current = answers.filter(
        (a) => a.run_id === w.run_id && a.node_id === w.node_id && a.digest === w.input_digest,
      );
      if (current.some((a) => a.user_id === userId)) continue;
      items.push({
        ...empty,
        kind: 'workflow_node',
        project_id: w.project_id,
        project_name: projectName.get(w.project_id) ?? '',
        since: w.start ?? '',
        message: node.message,
        started_by: w.user_id ? (names.get(w.user_id) ?? null) : null,
        run_id: w.run_id,
        workflow_id: w.workflow_id,
        workflow_name: w.workflow_name,
        node_id: w.node_id,
        node_name: node.name || node.id,
        input_digest: w.input_digest,
        approvals_required: node.required,
        approvals_given: current.filter((a) => a.decision === 'approved').length,
        timeout_at: w.wait_until,
      });
    }
  }
  return items.sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0));
}
