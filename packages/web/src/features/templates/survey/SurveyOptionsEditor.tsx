import AddIcon from '@mui/icons-material/Add';
import DeleteIcon from '@mui/icons-material/Delete';
import {
  Box,
  Button,
  FormControlLabel,
  IconButton,
  MenuItem,
  Radio,
  RadioGroup,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import type { AccessKey, Inventory, OptionList, OptionsSource, SurveyVar } from '@signalbox/contracts';
import { useTranslation } from 'react-i18next';
import { useResourceList } from '../../../api/resources';

type SourceType = OptionsSource['type'];
const sourceTypes: SourceType[] = [
  'inventory_hosts',
  'inventory_groups',
  'option_list',
  'task_outputs',
  'http',
];

/** A new source of a type, its fields empty (0 ids: nothing picked yet, which the contract refuses). */
function emptySource(type: SourceType): OptionsSource {
  switch (type) {
    case 'inventory_hosts':
    case 'inventory_groups':
      return { type, inventory_id: 0 };
    case 'option_list':
      return { type, option_list_id: 0 };
    case 'task_outputs':
      return { type, output: '' };
    default:
      return { type: 'http', url: '', items_path: '$[*]', value_path: '', label_path: '', key_id: null };
  }
}

/** The options of a choice variable: a list of fixed values, or where they come from when the task starts. */
export function SurveyOptionsEditor({
  projectId,
  values,
  source,
  onChange,
  error,
}: {
  projectId: number;
  values: SurveyVar['values'];
  source: OptionsSource | null;
  onChange: (patch: Partial<SurveyVar>) => void;
  error?: string;
}) {
  const { t } = useTranslation();
  const fromSource = source !== null;
  return (
    <Box>
      <Typography
        variant="subtitle2"
        component="h4"
        color={error ? 'error' : undefined}
        id="survey-options-label"
      >
        {t('survey.options')}
      </Typography>
      <RadioGroup
        row
        aria-labelledby="survey-options-label"
        value={fromSource ? 'source' : 'values'}
        onChange={(e) =>
          onChange(
            e.target.value === 'source'
              ? { options_source: emptySource('option_list'), values: [] }
              : { options_source: null },
          )
        }
      >
        <FormControlLabel value="values" control={<Radio size="small" />} label={t('survey.fixedValues')} />
        <FormControlLabel value="source" control={<Radio size="small" />} label={t('survey.fromSource')} />
      </RadioGroup>
      {error && (
        <Typography variant="caption" color="error" role="alert" component="p">
          {error}
        </Typography>
      )}
      {source ? (
        <SourceFields
          projectId={projectId}
          source={source}
          onChange={(s) => onChange({ options_source: s })}
        />
      ) : (
        <ValuesRows values={values} onChange={(next) => onChange({ values: next })} />
      )}
    </Box>
  );
}

function ValuesRows({
  values,
  onChange,
}: {
  values: SurveyVar['values'];
  onChange: (v: SurveyVar['values']) => void;
}) {
  const { t } = useTranslation();
  return (
    <>
      <Stack spacing={1} sx={{ mt: 1 }}>
        {values.map((row, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: value rows are edited in place
          <Box key={index} sx={{ display: 'flex', gap: 1, alignItems: 'center' }}>
            <TextField
              size="small"
              label={t('survey.valueName')}
              value={row.name}
              onChange={(e) =>
                onChange(values.map((r, i) => (i === index ? { ...r, name: e.target.value } : r)))
              }
              sx={{ flex: 1, minWidth: 0 }}
            />
            <TextField
              size="small"
              label={t('survey.valueValue')}
              value={row.value}
              onChange={(e) =>
                onChange(values.map((r, i) => (i === index ? { ...r, value: e.target.value } : r)))
              }
              sx={{ flex: 1, minWidth: 0 }}
            />
            <IconButton
              aria-label={t('survey.removeValueN', { n: index + 1 })}
              onClick={() => onChange(values.filter((_, i) => i !== index))}
            >
              <DeleteIcon fontSize="small" />
            </IconButton>
          </Box>
        ))}
      </Stack>
      <Button
        size="small"
        startIcon={<AddIcon />}
        onClick={() => onChange([...values, { name: '', value: '' }])}
      >
        {t('survey.addValue')}
      </Button>
    </>
  );
}

/** The fields of one source: an inventory, an option list, an output's name, or an HTTP request. */
function SourceFields({
  projectId,
  source,
  onChange,
}: {
  projectId: number;
  source: OptionsSource;
  onChange: (s: OptionsSource) => void;
}) {
  const { t } = useTranslation();
  const byInventory = source.type === 'inventory_hosts' || source.type === 'inventory_groups';
  const inventories = useResourceList<Inventory>(projectId, 'inventory', byInventory);
  const lists = useResourceList<OptionList>(projectId, 'option_lists', source.type === 'option_list');
  const keys = useResourceList<AccessKey>(projectId, 'keys', source.type === 'http');
  return (
    <Stack spacing={2} sx={{ mt: 1 }}>
      <TextField
        select
        size="small"
        label={t('survey.sourceType')}
        value={source.type}
        onChange={(e) => onChange(emptySource(e.target.value as SourceType))}
      >
        {sourceTypes.map((ty) => (
          <MenuItem key={ty} value={ty}>
            {t(`survey.sources.${ty}`)}
          </MenuItem>
        ))}
      </TextField>
      {byInventory && (
        <TextField
          select
          size="small"
          required
          label={t('res.inventory')}
          value={source.inventory_id || ''}
          onChange={(e) => onChange({ ...source, inventory_id: Number(e.target.value) })}
        >
          {(inventories.data ?? []).map((i) => (
            <MenuItem key={i.id} value={i.id}>
              {i.name}
            </MenuItem>
          ))}
        </TextField>
      )}
      {source.type === 'option_list' && (
        <TextField
          select
          size="small"
          required
          label={t('survey.optionList')}
          value={source.option_list_id || ''}
          onChange={(e) => onChange({ ...source, option_list_id: Number(e.target.value) })}
          helperText={lists.data?.length === 0 ? t('optionLists.empty') : undefined}
        >
          {(lists.data ?? []).map((l) => (
            <MenuItem key={l.id} value={l.id}>
              {l.name}
            </MenuItem>
          ))}
        </TextField>
      )}
      {source.type === 'task_outputs' && (
        <TextField
          size="small"
          required
          label={t('survey.outputName')}
          value={source.output}
          onChange={(e) => onChange({ ...source, output: e.target.value })}
          helperText={t('survey.outputHelp')}
        />
      )}
      {source.type === 'http' && (
        <>
          <TextField
            size="small"
            required
            type="url"
            label={t('survey.httpUrl')}
            value={source.url}
            onChange={(e) => onChange({ ...source, url: e.target.value })}
          />
          <TextField
            size="small"
            label={t('survey.itemsPath')}
            value={source.items_path}
            onChange={(e) => onChange({ ...source, items_path: e.target.value })}
            helperText={t('survey.itemsPathHelp')}
          />
          <Box sx={{ display: 'flex', gap: 1 }}>
            <TextField
              size="small"
              label={t('survey.valuePath')}
              value={source.value_path}
              onChange={(e) => onChange({ ...source, value_path: e.target.value })}
              sx={{ flex: 1, minWidth: 0 }}
            />
            <TextField
              size="small"
              label={t('survey.labelPath')}
              value={source.label_path}
              onChange={(e) => onChange({ ...source, label_path: e.target.value })}
              sx={{ flex: 1, minWidth: 0 }}
            />
          </Box>
          <TextField
            select
            size="small"
            label={t('survey.httpKey')}
            value={source.key_id ?? ''}
            onChange={(e) => onChange({ ...source, key_id: e.target.value ? Number(e.target.value) : null })}
          >
            <MenuItem value="">
              <em>{t('res.none')}</em>
            </MenuItem>
            {(keys.data ?? [])
              .filter((k) => k.type === 'login_password')
              .map((k) => (
                <MenuItem key={k.id} value={k.id}>
                  {k.name}
                </MenuItem>
              ))}
          </TextField>
        </>
      )}
    </Stack>
  );
}
