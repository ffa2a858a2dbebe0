import { Box, Stack, Typography } from '@mui/material';
import type { StateDiff } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { FormError } from '../../components/forms';
import { useStateDiff } from './api';

const mono = { fontFamily: 'monospace', fontSize: '0.85rem', overflowWrap: 'anywhere' } as const;

function Addresses({ title, list, color }: { title: string; list: string[]; color: string }) {
  if (!list.length) return null;
  return (
    <Box>
      <Typography variant="subtitle2">{title}</Typography>
      <Box component="ul" sx={{ m: 0, pl: 2, color }}>
        {list.map((a) => (
          <Box component="li" key={a} sx={mono}>
            {a}
          </Box>
        ))}
      </Box>
    </Box>
  );
}

function Changed({ changed }: { changed: StateDiff['changed'] }) {
  const { t } = useTranslation();
  if (!changed.length) return null;
  return (
    <Box>
      <Typography variant="subtitle2">{t('states.changed')}</Typography>
      <Box component="ul" sx={{ m: 0, pl: 2 }}>
        {changed.map((c) => (
          <Box component="li" key={c.address} data-diff-address={c.address} sx={{ mb: 0.5 }}>
            <Box sx={{ ...mono, fontWeight: 600, color: 'warning.main' }}>{c.address}</Box>
            <Box component="ul" sx={{ m: 0, pl: 2 }}>
              {c.attributes.map((a) => (
                <Box component="li" key={a.path} sx={mono}>
                  {a.path}:{' '}
                  {a.sensitive ? (
                    <Box component="em" sx={{ color: 'text.secondary' }}>
                      {t('states.sensitive')}
                    </Box>
                  ) : (
                    `${a.before ?? '∅'} → ${a.after ?? '∅'}`
                  )}
                </Box>
              ))}
            </Box>
          </Box>
        ))}
      </Box>
    </Box>
  );
}

/** What changed from one version of a state to the next, by resource; sensitive values are never shown. */
export function StateDiffView({
  projectId,
  name,
  from,
  to,
}: {
  projectId: number;
  name: string;
  from: number;
  to: number;
}) {
  const { t } = useTranslation();
  const diff = useStateDiff(projectId, name, { from, to });
  if (diff.error) return <FormError error={diff.error} />;
  const d = diff.data;
  if (!d) return null;
  const none = !d.added.length && !d.removed.length && !d.changed.length;
  return (
    <Stack
      spacing={1}
      aria-label={t('states.changesTitle', { from: d.from.serial, to: d.to.serial })}
      role="region"
    >
      <Typography variant="body2" color="text.secondary">
        {t('states.changesTitle', { from: d.from.serial, to: d.to.serial })}
      </Typography>
      {none && <Typography variant="body2">{t('states.noChanges')}</Typography>}
      <Addresses title={t('states.added')} list={d.added} color="success.main" />
      <Addresses title={t('states.removed')} list={d.removed} color="error.main" />
      <Changed changed={d.changed} />
      {d.truncated && (
        <Typography variant="caption" color="text.secondary">
          {t('states.truncated')}
        </Typography>
      )}
    </Stack>
  );
}
