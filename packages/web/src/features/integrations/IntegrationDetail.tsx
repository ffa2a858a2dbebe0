import AddIcon from '@mui/icons-material/Add';
import EditIcon from '@mui/icons-material/Edit';
import { Box, Button, TableCell, TableRow, Typography } from '@mui/material';
import type { Integration, IntegrationExtractValue, IntegrationMatcher } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useParams } from 'react-router';
import { api } from '../../api/client';
import { useEditDialog } from '../../components/edit-dialog';
import { DetailHeader } from '../../components/PageHeader';
import { useProjectContext } from '../../components/project-context';
import { ResourceTable, RowActions } from '../../components/ResourceTable';
import { Spinner } from '../../components/states';
import { ErrorAlert, PageBody, useResourceNotify, wideOnlySx } from '../../components/ui';
import { AliasList } from './AliasList';
import { IntegrationDialog } from './IntegrationDialog';
import { MatcherDialog, ValueDialog } from './RuleDialogs';

function Section({ title, action, children }: { title: string; action?: ReactNode; children: ReactNode }) {
  return (
    <Box sx={{ mb: 3 }}>
      <Box sx={{ display: 'flex', alignItems: 'center', mb: 1, gap: 1, flexWrap: 'wrap' }}>
        <Typography variant="subtitle1" component="h2" sx={{ fontWeight: 600, flex: 1 }}>
          {title}
        </Typography>
        {action}
      </Box>
      {children}
    </Box>
  );
}

/** An integration's matchers or extracted values. */
function useRules<T>(projectId: number, integrationId: number, kind: 'matchers' | 'values') {
  return useQuery({
    queryKey: ['project', projectId, 'integrations', integrationId, kind],
    queryFn: () => api<T[]>(`/project/${projectId}/integrations/${integrationId}/${kind}`),
  });
}

/** /project/{id}/integration/{integrationId}: aliases, matchers and extracted values. */
export default function IntegrationDetail() {
  const { t } = useTranslation();
  const { project, can } = useProjectContext();
  const notify = useResourceNotify();
  const client = useQueryClient();
  const id = Number(useParams().integrationId);
  const base = `/project/${project.id}/integrations/${id}`;
  const integration = useQuery({
    queryKey: ['project', project.id, 'integrations', id],
    queryFn: () => api<Integration>(base),
    retry: false,
  });
  const matchers = useRules<IntegrationMatcher>(project.id, id, 'matchers');
  const values = useRules<IntegrationExtractValue>(project.id, id, 'values');
  const remove = useMutation({
    mutationFn: ({ kind, ruleId }: { kind: 'matchers' | 'values'; ruleId: number }) =>
      api(`${base}/${kind}/${ruleId}`, { method: 'DELETE' }),
    onSuccess: (_, v) =>
      void client.invalidateQueries({ queryKey: ['project', project.id, 'integrations', id, v.kind] }),
  });
  const [editing, setEditing] = useState(false);
  const matcher = useEditDialog<IntegrationMatcher>();
  const value = useEditDialog<IntegrationExtractValue>();
  const write = can('updateProject');

  if (integration.isPending) return <Spinner full={false} />;
  if (integration.error || !integration.data)
    return (
      <PageBody>
        <ErrorAlert error={integration.error} />
      </PageBody>
    );
  const item = integration.data;
  const del = (kind: 'matchers' | 'values', ruleId: number) =>
    remove.mutate({ kind, ruleId }, { onError: (err) => notify.error(err) });

  return (
    <>
      <DetailHeader
        label={t('integrations.breadcrumb')}
        listLabel={t('nav.integrations')}
        listPath={`/project/${project.id}/integrations`}
        title={item.name}
        actions={
          write && (
            <Button startIcon={<EditIcon />} onClick={() => setEditing(true)}>
              {t('res.edit')}
            </Button>
          )
        }
      />
      <PageBody>
        {/* Alias URLs start tasks: only members who may run tasks see them. */}
        {can('runProjectTasks') && (
          <Section title={t('integrations.aliases')}>
            <AliasList projectId={project.id} integrationId={id} canWrite={write} />
          </Section>
        )}
        <Section
          title={t('integrations.matchers')}
          action={
            write && (
              <Button size="small" startIcon={<AddIcon />} onClick={matcher.startNew}>
                {t('integrations.newMatcher')}
              </Button>
            )
          }
        >
          <ResourceTable
            label={t('integrations.matchers')}
            items={matchers.data}
            error={matchers.error}
            empty={t('integrations.noMatchers')}
            withActions={write}
            head={
              <>
                <TableCell>{t('res.name')}</TableCell>
                <TableCell sx={wideOnlySx}>{t('integrations.matchType')}</TableCell>
                <TableCell>{t('integrations.key')}</TableCell>
                <TableCell sx={wideOnlySx}>{t('integrations.method')}</TableCell>
                <TableCell>{t('integrations.value')}</TableCell>
              </>
            }
          >
            {(m) => (
              <TableRow key={m.id}>
                <TableCell sx={{ wordBreak: 'break-word' }}>{m.name}</TableCell>
                <TableCell sx={wideOnlySx}>{t(`integrations.sources.${m.match_type}`)}</TableCell>
                <TableCell sx={{ wordBreak: 'break-all' }}>{m.key}</TableCell>
                <TableCell sx={wideOnlySx}>{t(`integrations.methodsMatch.${m.method}`)}</TableCell>
                <TableCell sx={{ wordBreak: 'break-all' }}>{m.value}</TableCell>
                {write && (
                  <RowActions
                    name={m.name}
                    onEdit={() => matcher.edit(m)}
                    onDelete={() => del('matchers', m.id)}
                  />
                )}
              </TableRow>
            )}
          </ResourceTable>
        </Section>
        <Section
          title={t('integrations.values')}
          action={
            write && (
              <Button size="small" startIcon={<AddIcon />} onClick={value.startNew}>
                {t('integrations.newValue')}
              </Button>
            )
          }
        >
          <ResourceTable
            label={t('integrations.values')}
            items={values.data}
            error={values.error}
            empty={t('integrations.noValues')}
            withActions={write}
            head={
              <>
                <TableCell>{t('res.name')}</TableCell>
                <TableCell sx={wideOnlySx}>{t('integrations.valueSource')}</TableCell>
                <TableCell>{t('integrations.key')}</TableCell>
                <TableCell>{t('integrations.variable')}</TableCell>
              </>
            }
          >
            {(v) => (
              <TableRow key={v.id}>
                <TableCell sx={{ wordBreak: 'break-word' }}>{v.name}</TableCell>
                <TableCell sx={wideOnlySx}>{t(`integrations.sources.${v.value_source}`)}</TableCell>
                <TableCell sx={{ wordBreak: 'break-all' }}>{v.key}</TableCell>
                <TableCell sx={{ wordBreak: 'break-all' }}>{v.variable}</TableCell>
                {write && (
                  <RowActions
                    name={v.name}
                    onEdit={() => value.edit(v)}
                    onDelete={() => del('values', v.id)}
                  />
                )}
              </TableRow>
            )}
          </ResourceTable>
        </Section>
      </PageBody>
      {editing && (
        <IntegrationDialog
          projectId={project.id}
          item={item}
          onClose={() => {
            setEditing(false);
            void integration.refetch();
          }}
        />
      )}
      {matcher.open && (
        <MatcherDialog
          projectId={project.id}
          integrationId={id}
          item={matcher.item}
          onClose={matcher.close}
        />
      )}
      {value.open && (
        <ValueDialog projectId={project.id} integrationId={id} item={value.item} onClose={value.close} />
      )}
    </>
  );
}
