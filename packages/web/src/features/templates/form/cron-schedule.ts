import type { Schedule } from '@signalbox/contracts';
import { useQuery } from '@tanstack/react-query';
import { ApiError, api } from '../../../api/client';
import { resourceKey } from '../../../api/resources';

/**
 * The template form's "Cron schedule" field is kept as a schedule of the template: the template's first (lowest
 * id) cron schedule that checks no repository. Schedules that check a repository belong to the
 * check-new-commits option; other cron schedules of the template are left to the Schedule page. The server keeps
 * the same rule when the form saves it as the template body's `schedule`.
 */
export const formScheduleOf = (schedules: Schedule[]): Schedule | null =>
  schedules.filter((s) => s.type === '' && s.repository_id === null).sort((a, b) => a.id - b.id)[0] ?? null;

/** The schedule the form's cron field edits, for a template being edited (none for a new one). */
export function useFormSchedule(projectId: number, templateId: number | undefined) {
  return useQuery({
    queryKey: [...resourceKey(projectId, 'schedules'), 'template', templateId],
    queryFn: async () =>
      formScheduleOf(await api<Schedule[]>(`/project/${projectId}/templates/${templateId}/schedules`)),
    enabled: !!templateId,
  });
}

/**
 * Why the server refused the body's schedule part (a 400 naming `schedule.cron_format` or `schedule`), for the
 * Cron schedule field; null when the error is about something else.
 */
export function scheduleProblem(err: unknown): string | null {
  if (!(err instanceof ApiError) || err.status !== 400) return null;
  const fields = err.body?.fields;
  return fields?.['schedule.cron_format'] ?? fields?.schedule ?? null;
}
