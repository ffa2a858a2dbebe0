import { DEFAULT_CRON, type Template, type TemplateInput } from '@signalbox/contracts';
import { recordProjectEvent } from '../../audit/audit.store';
import type { Deps } from '../../deps';
import { found } from '../../lib/errors';
import { commitCheckSchedules, deleteSchedule, insertSchedule, updateSchedule } from '../schedules';

// The check-new-commits option of the template form, kept as a schedule with a repository.

type Actor = { id: number };

export type CommitCheck = Pick<
  Template,
  'check_new_commits' | 'cron_format' | 'check_new_commits_repository_id'
>;
export type ScheduleLike = { template_id: number; cron_format: string; repository_id: number | null };

const noCommitCheck: CommitCheck = {
  check_new_commits: false,
  cron_format: DEFAULT_CRON,
  check_new_commits_repository_id: null,
};

/** The check-new-commits fields are shown only when the template has exactly one such schedule. */
export function commitCheckOf(schedules: ScheduleLike[]): CommitCheck {
  if (schedules.length !== 1) return noCommitCheck;
  const [s] = schedules as [ScheduleLike];
  return {
    check_new_commits: true,
    cron_format: s.cron_format,
    check_new_commits_repository_id: s.repository_id,
  };
}

/**
 * Applies the check-new-commits rules to the template's commit-check schedules: create one when
 * none exists and the option is on, update the only one when on, delete the only one when off, and leave
 * several alone. A body without `check_new_commits` leaves them alone too. Returns whether anything changed.
 */
export async function applyCommitCheck(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: Actor,
  projectId: number,
  templateId: number,
  input: TemplateInput,
) {
  if (input.check_new_commits == null) return false;
  const existing = await commitCheckSchedules(deps.db, templateId);
  if (existing.length > 1) return false;
  const [current] = existing;
  const event = (id: number, verb: string) =>
    recordProjectEvent(
      deps.db,
      user,
      projectId,
      'schedule',
      id,
      `Check-new-commits schedule of template ${input.name} ${verb}`,
    );
  if (input.check_new_commits) {
    // The contract requires the repository whenever check_new_commits is on.
    const repositoryId = found(input.check_new_commits_repository_id, 'repository');
    if (!current) {
      const id = await insertSchedule(deps.db, deps.dialect, {
        project_id: projectId,
        template_id: templateId,
        cron_format: input.cron_format,
        repository_id: repositoryId,
        name: '',
        active: 1,
        last_commit_hash: null,
      });
      await event(id, 'created');
      return true;
    }
    if (current.cron_format === input.cron_format && current.repository_id === repositoryId) return false;
    await updateSchedule(deps.db, current.id, {
      cron_format: input.cron_format,
      repository_id: repositoryId,
      ...(current.repository_id !== repositoryId ? { last_commit_hash: null } : {}),
    });
    await event(current.id, 'updated');
    return true;
  }
  if (!current) return false;
  await deleteSchedule(deps.db, current.id);
  await event(current.id, 'deleted');
  return true;
}
