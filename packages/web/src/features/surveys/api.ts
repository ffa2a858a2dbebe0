import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client';
import { resourceKey } from '../../api/resources';
import { formFields, type SurveyField } from './survey-form';

/**
 * GET …/templates/{id}/survey-schema: the survey as the server resolves it (options of sources fetched now), as
 * the run form's fields. Never cached across dialogs: options change.
 */
export function useSurveySchema(projectId: number, templateId: number, enabled = true) {
  return useQuery({
    queryKey: [...resourceKey(projectId, 'templates'), 'survey-schema', templateId],
    queryFn: async (): Promise<SurveyField[]> =>
      formFields(await api<unknown>(`/project/${projectId}/templates/${templateId}/survey-schema`)),
    enabled,
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
}
