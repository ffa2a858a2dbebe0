import {
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  Link,
  List,
  ListItem,
  ListSubheader,
} from '@mui/material';
import type { Refs } from '@signalbox/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link as RouterLink } from 'react-router';
import { ApiError } from '../api/client';
import { fetchRefs, hasRefs, useResourceDelete } from '../api/resources';
import { ConfirmDialog } from './ConfirmDialog';
import { ErrorAlert, useResourceNotify } from './ui';

type Target = { id: number; name: string };
type State =
  | { step: 'idle' }
  | { step: 'confirm'; target: Target }
  | { step: 'refs'; target: Target; refs: Partial<Refs> };

/**
 * Delete with a references check first: if anything uses the object, a refs dialog lists the
 * dependents instead of the confirmation; if the lookup fails, a plain confirmation is shown. A 409 from the
 * delete itself (something started using it meanwhile) also opens the refs dialog.
 */
export function useDeleteFlow({
  projectId,
  collection,
  objectKey,
  remove,
  onDeleted,
}: {
  projectId: number;
  collection: string;
  /** Catalogue key naming the kind of object in the refs message, e.g. 'refs.objects.key'. */
  objectKey: string;
  remove: (id: number) => Promise<unknown>;
  onDeleted: (target: Target) => void;
}) {
  const [state, setState] = useState<State>({ step: 'idle' });
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const start = async (target: Target) => {
    setError(null);
    let refs: Partial<Refs> | null = null;
    try {
      refs = await fetchRefs(projectId, collection, target.id);
    } catch {
      refs = null; // The plain confirmation stands in when the lookup fails.
    }
    setState(hasRefs(refs) ? { step: 'refs', target, refs } : { step: 'confirm', target });
  };

  const confirm = async () => {
    if (state.step !== 'confirm') return;
    setPending(true);
    try {
      await remove(state.target.id);
      onDeleted(state.target);
      setState({ step: 'idle' });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && err.body?.refs)
        setState({ step: 'refs', target: state.target, refs: err.body.refs as Partial<Refs> });
      else setError(err);
    } finally {
      setPending(false);
    }
  };

  const close = () => setState({ step: 'idle' });
  const element = (
    <DeleteDialogs
      state={state}
      projectId={projectId}
      objectKey={objectKey}
      pending={pending}
      error={error}
      onConfirm={() => void confirm()}
      onClose={close}
    />
  );
  return { start, element };
}

/**
 * The delete flow of a project resource list: the references check, the delete that refreshes the list, and a
 * success snackbar from the catalogue key `deletedKey` (given the item's name).
 */
export function useResourceDeleteFlow({
  projectId,
  collection,
  objectKey,
  deletedKey,
}: {
  projectId: number;
  collection: string;
  objectKey: string;
  deletedKey: string;
}) {
  const { t } = useTranslation();
  const notify = useResourceNotify();
  const remove = useResourceDelete(projectId, collection);
  return useDeleteFlow({
    projectId,
    collection,
    objectKey,
    remove: (id) => remove.mutateAsync(id),
    onDeleted: (target) => notify.success(t(deletedKey, { name: target.name })),
  });
}

const refLinks: Record<keyof Refs, (projectId: number, id: number) => string> = {
  templates: (p, id) => `/project/${p}/templates/${id}`,
  inventories: (p) => `/project/${p}/inventory`,
  repositories: (p) => `/project/${p}/repositories`,
  environments: (p) => `/project/${p}/environment`,
  integrations: (p, id) => `/project/${p}/integration/${id}`,
  schedules: (p) => `/project/${p}/schedule`,
};

function DeleteDialogs({
  state,
  projectId,
  objectKey,
  pending,
  error,
  onConfirm,
  onClose,
}: {
  state: State;
  projectId: number;
  objectKey: string;
  pending: boolean;
  error: unknown;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const object = t(objectKey);
  return (
    <>
      <ConfirmDialog
        open={state.step === 'confirm'}
        title={t('refs.deleteTitle', { object })}
        text={
          <>
            <ErrorAlert error={error} />
            {t('refs.deleteConfirm', { name: state.step === 'confirm' ? state.target.name : '' })}
          </>
        }
        pending={pending}
        onConfirm={onConfirm}
        onClose={onClose}
      />
      <Dialog open={state.step === 'refs'} onClose={onClose} maxWidth="xs" fullWidth>
        <DialogTitle>{t('refs.inUseTitle', { object })}</DialogTitle>
        <DialogContent>
          <DialogContentText>{t('refs.inUse', { object })}</DialogContentText>
          {state.step === 'refs' &&
            (Object.keys(refLinks) as (keyof Refs)[]).map((kind) => {
              const list = state.refs[kind] ?? [];
              if (list.length === 0) return null;
              return (
                <List
                  key={kind}
                  dense
                  subheader={<ListSubheader disableSticky>{t(`refs.kinds.${kind}`)}</ListSubheader>}
                >
                  {list.map((item) => (
                    <ListItem key={item.id}>
                      <Link component={RouterLink} to={refLinks[kind](projectId, item.id)} onClick={onClose}>
                        {item.name || `#${item.id}`}
                      </Link>
                    </ListItem>
                  ))}
                </List>
              );
            })}
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose} autoFocus>
            {t('common.close')}
          </Button>
        </DialogActions>
      </Dialog>
    </>
  );
}
