import type { Schedule } from '@signalbox/contracts';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api } from '../../../api/client';
import { resourceKey } from '../../../api/resources';

/**
 * The template form's "Cron schedule" field is kept as a schedule of the template: the template's first (lowest
 * id) cron schedule that checks no repository. Schedules that check a repository belong to the
 * check-new-commits option; other cron schedules of the template are left to the Schedule page.
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

/** The server's word on a cron (POST schedules/validate): null when accepted, else why not. */
export async function cronProblem(projectId: number, cron: string): Promise<string | null> {
  try {
    await api(`/project/${projectId}/schedules/validate`, { method: 'POST', body: { cron_format: cron } });
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) return err.message;
    throw err;
  }
}

/** Creates, updates or removes the form's schedule of a saved template so that it runs on `cron` ('' = none). */
export function useApplyFormSchedule(projectId: number) {
  const client = useQueryClient();
  return async (templateId: number, cron: string, current: Schedule | null) => {
    const base = `/project/${projectId}/schedules`;
    if (!cron && current) await api(`${base}/${current.id}`, { method: 'DELETE' });
    else if (cron && !current)
      await api(base, {
        method: 'POST',
        body: { project_id: projectId, template_id: templateId, cron_format: cron, active: true },
      });
    else if (cron && current && current.cron_format !== cron)
      await api(`${base}/${current.id}`, {
        method: 'PUT',
        body: {
          id: current.id,
          project_id: projectId,
          template_id: current.template_id,
          type: current.type,
          cron_format: cron,
          repository_id: null,
          name: current.name,
          active: current.active,
          task_params: current.task_params,
        },
      });
    await client.invalidateQueries({ queryKey: resourceKey(projectId, 'schedules') });
  };
}
