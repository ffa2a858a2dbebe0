import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import EditIcon from '@mui/icons-material/Edit';
import {
  Box,
  Breadcrumbs,
  Button,
  IconButton,
  Link,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Tooltip,
  Typography,
} from '@mui/material';
import type { Integration, IntegrationExtractValue, IntegrationMatcher } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink, useParams } from 'react-router';
import { api } from '../../api/client';
import { useProjectContext } from '../../app/project-context';
import { Spinner } from '../../app/states';
import {
  actionsSx,
  ErrorAlert,
  PageBody,
  TableFrame,
  useResourceNotify,
  wideOnlySx,
} from '../templates/shared/ui';
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
  const matchers = useQuery({
    queryKey: ['project', project.id, 'integrations', id, 'matchers'],
    queryFn: () => api<IntegrationMatcher[]>(`${base}/matchers`),
  });
  const values = useQuery({
    queryKey: ['project', project.id, 'integrations', id, 'values'],
    queryFn: () => api<IntegrationExtractValue[]>(`${base}/values`),
  });
  const remove = useMutation({
    mutationFn: ({ kind, ruleId }: { kind: 'matchers' | 'values'; ruleId: number }) =>
      api(`${base}/${kind}/${ruleId}`, { method: 'DELETE' }),
    onSuccess: (_, v) =>
      void client.invalidateQueries({ queryKey: ['project', project.id, 'integrations', id, v.kind] }),
  });
  const [editing, setEditing] = useState(false);
  const [matcher, setMatcher] = useState<IntegrationMatcher | 'new' | null>(null);
  const [value, setValue] = useState<IntegrationExtractValue | 'new' | null>(null);
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
      <Box
        sx={{
          display: 'flex',
          alignItems: 'center',
          gap: 1,
          flexWrap: 'wrap',
          px: { xs: 2, md: 3 },
          py: 2,
          borderBottom: 1,
          borderColor: 'divider',
          bgcolor: 'background.paper',
        }}
      >
        <Breadcrumbs
          aria-label={t('integrations.breadcrumb')}
          sx={{ flex: '1 1 auto', minWidth: 0, '& ol': { flexWrap: 'wrap' } }}
        >
          <Link
            component={RouterLink}
            to={`/project/${project.id}/integrations`}
            variant="h6"
            underline="hover"
          >
            {t('nav.integrations')}
          </Link>
          <Typography variant="h6" component="h1" sx={{ fontWeight: 700, wordBreak: 'break-word' }}>
            {item.name}
          </Typography>
        </Breadcrumbs>
        {write && (
          <Button startIcon={<EditIcon />} onClick={() => setEditing(true)}>
            {t('res.edit')}
          </Button>
        )}
      </Box>
      <PageBody>
        <Section title={t('integrations.aliases')}>
          <AliasList projectId={project.id} integrationId={id} canWrite={write} />
        </Section>
        <Section
          title={t('integrations.matchers')}
          action={
            <Button size="small" startIcon={<AddIcon />} onClick={() => setMatcher('new')}>
              {t('integrations.newMatcher')}
            </Button>
          }
        >
          <ErrorAlert error={matchers.error} />
          <TableFrame empty={(matchers.data ?? []).length === 0 && t('integrations.noMatchers')}>
            <Table size="small" aria-label={t('integrations.matchers')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.name')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('integrations.matchType')}</TableCell>
                  <TableCell>{t('integrations.key')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('integrations.method')}</TableCell>
                  <TableCell>{t('integrations.value')}</TableCell>
                  <TableCell align="right" sx={actionsSx}>
                    {t('common.actions')}
                  </TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {(matchers.data ?? []).map((m) => (
                  <TableRow key={m.id}>
                    <TableCell sx={{ wordBreak: 'break-word' }}>{m.name}</TableCell>
                    <TableCell sx={wideOnlySx}>{t(`integrations.sources.${m.match_type}`)}</TableCell>
                    <TableCell sx={{ wordBreak: 'break-all' }}>{m.key}</TableCell>
                    <TableCell sx={wideOnlySx}>{t(`integrations.methodsMatch.${m.method}`)}</TableCell>
                    <TableCell sx={{ wordBreak: 'break-all' }}>{m.value}</TableCell>
                    <TableCell align="right" sx={actionsSx}>
                      <Tooltip title={t('res.edit')}>
                        <IconButton
                          aria-label={t('res.editNamed', { name: m.name })}
                          onClick={() => setMatcher(m)}
                        >
                          <EditIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                      <Tooltip title={t('common.delete')}>
                        <IconButton
                          aria-label={t('res.deleteNamed', { name: m.name })}
                          onClick={() => del('matchers', m.id)}
                        >
                          <DeleteIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </TableFrame>
        </Section>
        <Section
          title={t('integrations.values')}
          action={
            <Button size="small" startIcon={<AddIcon />} onClick={() => setValue('new')}>
              {t('integrations.newValue')}
            </Button>
          }
        >
          <ErrorAlert error={values.error} />
          <TableFrame empty={(values.data ?? []).length === 0 && t('integrations.noValues')}>
            <Table size="small" aria-label={t('integrations.values')}>
              <TableHead>
                <TableRow>
                  <TableCell>{t('res.name')}</TableCell>
                  <TableCell sx={wideOnlySx}>{t('integrations.valueSource')}</TableCell>
                  <TableCell>{t('integrations.key')}</TableCell>
                  <TableCell>{t('integrations.variable')}</TableCell>
                  <TableCell align="right" sx={actionsSx}>
                    {t('common.actions')}
                  </TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {(values.data ?? []).map((v) => (
                  <TableRow key={v.id}>
                    <TableCell sx={{ wordBreak: 'break-word' }}>{v.name}</TableCell>
                    <TableCell sx={wideOnlySx}>{t(`integrations.sources.${v.value_source}`)}</TableCell>
                    <TableCell sx={{ wordBreak: 'break-all' }}>{v.key}</TableCell>
                    <TableCell sx={{ wordBreak: 'break-all' }}>{v.variable}</TableCell>
                    <TableCell align="right" sx={actionsSx}>
                      <Tooltip title={t('res.edit')}>
                        <IconButton
                          aria-label={t('res.editNamed', { name: v.name })}
                          onClick={() => setValue(v)}
                        >
                          <EditIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                      <Tooltip title={t('common.delete')}>
                        <IconButton
                          aria-label={t('res.deleteNamed', { name: v.name })}
                          onClick={() => del('values', v.id)}
                        >
                          <DeleteIcon fontSize="small" />
                        </IconButton>
                      </Tooltip>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </TableFrame>
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
      {matcher && (
        <MatcherDialog
          projectId={project.id}
          integrationId={id}
          item={matcher === 'new' ? null : matcher}
          onClose={() => setMatcher(null)}
        />
      )}
      {value && (
        <ValueDialog
          projectId={project.id}
          integrationId={id}
          item={value === 'new' ? null : value}
          onClose={() => setValue(null)}
        />
      )}
    </>
  );
}
