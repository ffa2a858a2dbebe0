import { Alert, Box, Link } from '@mui/material';
import { useTranslation } from 'react-i18next';
import { translateCode } from '../../../i18n/messages';
import type { EditorErrors } from './errors';

/**
 * What the server refused, above the graph: each problem in a node or edge as a link selecting it (its panel then
 * shows the problem at its field), and problems naming nothing the graph shows.
 */
export function ErrorSummary({
  errors,
  title,
  onSelectNode,
  onSelectEdge,
}: {
  errors: EditorErrors;
  title: (nodeId: string) => string;
  onSelectNode: (id: string) => void;
  onSelectEdge: (key: string) => void;
}) {
  const { t } = useTranslation();
  const count = errors.nodes.size + errors.edges.size + errors.fields.size + errors.other.length;
  if (count === 0) return null;
  return (
    <Alert severity="error" role="alert" sx={{ mb: 1.5 }}>
      <Box component="p" sx={{ m: 0, fontWeight: 600 }}>
        {t('wf.errors.title')}
      </Box>
      <Box component="ul" sx={{ m: 0, pl: 2 }}>
        {[...errors.nodes].map(([id, list]) =>
          list.map((e) => (
            <li key={`${id}-${e.field}-${e.error.code}`}>
              <Link component="button" type="button" onClick={() => onSelectNode(id)}>
                {title(id)}
              </Link>
              {`: ${translateCode(e.error, t, e.field ?? undefined)}`}
            </li>
          )),
        )}
        {[...errors.edges].map(([key, error]) => (
          <li key={key}>
            <Link component="button" type="button" onClick={() => onSelectEdge(key)}>
              {key
                .split('→')
                .map((id) => title(id))
                .join(' → ')}
            </Link>
            {`: ${translateCode(error, t, 'condition')}`}
          </li>
        ))}
        {[...errors.fields].map(([field, error]) => (
          <li key={field}>{translateCode(error, t, field)}</li>
        ))}
        {errors.other.map((error) => (
          <li key={`${error.code}-${JSON.stringify(error.params)}`}>{translateCode(error, t)}</li>
        ))}
      </Box>
    </Alert>
  );
}
