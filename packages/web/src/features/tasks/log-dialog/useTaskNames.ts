import { skipToken, useQuery } from '@tanstack/react-query';
import { api } from '../../../api/client';
import { type Task, useTaskHistory } from '../api';

/**
 * The names of a task's template and user: GET tasks/{id} carries ids only, so they come from what the page knows
 * (the task history) or, for the template, from the template itself.
 */
export function useTaskNames(projectId: number, taskId: number, task: Task | undefined) {
  const template = useQuery({
    queryKey: ['project', projectId, 'template', task?.template_id],
    queryFn:
      task?.template_id && !task.tpl_alias
        ? () => api<{ name: string }>(`/project/${projectId}/templates/${task.template_id}`)
        : skipToken,
    retry: false,
  });
  const history = useTaskHistory(projectId);
  const fromHistory = history.data?.find((x) => x.id === taskId);
  return {
    templateName: task?.tpl_alias || fromHistory?.tpl_alias || template.data?.name,
    userName: task?.user_name ?? fromHistory?.user_name,
  };
}
