import type { ViewInput, ViewPositionsInput } from '@signalbox/contracts';
import { coded } from '@signalbox/contracts';
import { recordNamedEvent, recordProjectEvent } from '../../audit/audit.store';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { badRequest, found, notFound } from '../../lib/errors';
import { assertNameFree } from '../../lib/unique-names';
import { assertSameProject } from '../schedules';
import {
  deleteView,
  findView,
  insertView,
  nextPosition,
  setPositions,
  updateView,
  viewIdsInProject,
} from './views.store';

type Actor = { id: number };

export async function getView(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  const view = await findView(deps.db, projectId, id);
  if (!view) throw notFound('view');
  return view;
}

export async function createView(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: Actor,
  projectId: number,
  input: ViewInput,
) {
  assertSameProject(input.project_id, projectId);
  await assertNameFree(deps.db, 'view', projectId, input.title);
  const position = input.position ?? (await nextPosition(deps.db, projectId));
  const id = await transaction(deps.db, async (trx) => {
    const id = await insertView(trx, deps.dialect, { project_id: projectId, title: input.title, position });
    await recordNamedEvent(trx, user, projectId, {
      type: 'view',
      label: 'View',
      id,
      name: input.title,
      action: 'created',
    });
    return id;
  });
  return found(await findView(deps.db, projectId, id), 'view');
}

export async function changeView(
  deps: Pick<Deps, 'db'>,
  user: Actor,
  projectId: number,
  id: number,
  input: ViewInput,
) {
  const existing = await getView(deps, projectId, id);
  assertSameProject(input.project_id, projectId);
  await assertNameFree(deps.db, 'view', projectId, input.title, id);
  await transaction(deps.db, async (trx) => {
    await updateView(trx, id, { title: input.title, position: input.position ?? existing.position });
    await recordNamedEvent(trx, user, projectId, {
      type: 'view',
      label: 'View',
      id,
      name: input.title,
      action: 'updated',
    });
  });
}

export async function removeView(deps: Pick<Deps, 'db'>, user: Actor, projectId: number, id: number) {
  const existing = await getView(deps, projectId, id);
  await transaction(deps.db, async (trx) => {
    await deleteView(trx, projectId, id);
    await recordNamedEvent(trx, user, projectId, {
      type: 'view',
      label: 'View',
      id,
      name: existing.title,
      action: 'deleted',
    });
  });
}

/** Reorders views; every id must be a view of this project, else nothing changes. */
export async function reorderViews(
  deps: Pick<Deps, 'db'>,
  user: Actor,
  projectId: number,
  positions: ViewPositionsInput,
) {
  const ids = positions.map((p) => p.id);
  const known = await viewIdsInProject(deps.db, projectId, ids);
  const unknown = ids.find((id) => !known.has(id));
  if (unknown !== undefined)
    throw badRequest(coded('not_in_project', { what: 'view', id: unknown }), {
      [unknown]: coded('not_found', { what: 'view' }),
    });
  await transaction(deps.db, async (trx) => {
    await setPositions(trx, projectId, positions);
    await recordProjectEvent(trx, user, projectId, 'view', null, 'Views reordered');
  });
}
