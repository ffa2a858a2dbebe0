import type { OptionListInput } from '@signalbox/contracts';
import type { UserRow } from '../../access/principals.store';
import { assertUnused, findRefs } from '../../access/refs.store';
import { recordNamedEvent } from '../../audit/audit.store';
import type { Db } from '../../db';
import { transaction } from '../../db/transaction';
import type { Deps } from '../../deps';
import { assertBodyIds } from '../../http/body-ids';
import { notFound } from '../../lib/errors';
import { assertNameFree } from '../../lib/unique-names';
import {
  deleteOptionListRow,
  findOptionListRow,
  insertOptionListRow,
  listOptionListRows,
  toOptionList,
  updateOptionListRow,
} from './option-lists.store';

export async function listOptionLists(deps: Pick<Deps, 'db'>, projectId: number, order: 'asc' | 'desc') {
  return (await listOptionListRows(deps.db, projectId, order)).map(toOptionList);
}

async function requireOptionList(db: Db, projectId: number, id: number) {
  const row = await findOptionListRow(db, projectId, id);
  if (!row) throw notFound('option_list');
  return row;
}

export async function getOptionList(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  return toOptionList(await requireOptionList(deps.db, projectId, id));
}

export async function optionListRefs(deps: Pick<Deps, 'db'>, projectId: number, id: number) {
  await requireOptionList(deps.db, projectId, id);
  return findRefs(deps.db, projectId, 'option_list', id);
}

const values = (input: OptionListInput) => ({ name: input.name, options: input.options });

export async function createOptionList(
  deps: Pick<Deps, 'db' | 'dialect'>,
  user: UserRow,
  projectId: number,
  input: OptionListInput,
) {
  assertBodyIds(input, projectId);
  await assertNameFree(deps.db, 'option_list', projectId, input.name);
  const id = await transaction(deps.db, async (trx) => {
    const id = await insertOptionListRow(trx, deps.dialect, projectId, values(input));
    await recordNamedEvent(trx, user, projectId, {
      type: 'option_list',
      label: 'Option list',
      id,
      name: input.name,
      action: 'created',
    });
    return id;
  });
  return getOptionList(deps, projectId, id);
}

export async function updateOptionList(
  deps: Pick<Deps, 'db'>,
  user: UserRow,
  projectId: number,
  id: number,
  input: OptionListInput,
) {
  assertBodyIds(input, projectId, id);
  await requireOptionList(deps.db, projectId, id);
  await assertNameFree(deps.db, 'option_list', projectId, input.name, id);
  await transaction(deps.db, async (trx) => {
    await updateOptionListRow(trx, projectId, id, values(input));
    await recordNamedEvent(trx, user, projectId, {
      type: 'option_list',
      label: 'Option list',
      id,
      name: input.name,
      action: 'updated',
    });
  });
}

/** Deletes an option list no template's survey uses (one in use: 409 naming the templates under `refs`). */
export async function deleteOptionList(deps: Pick<Deps, 'db'>, user: UserRow, projectId: number, id: number) {
  const row = await requireOptionList(deps.db, projectId, id);
  await assertUnused(deps.db, projectId, 'option_list', id);
  await transaction(deps.db, async (trx) => {
    await deleteOptionListRow(trx, projectId, id);
    await recordNamedEvent(trx, user, projectId, {
      type: 'option_list',
      label: 'Option list',
      id,
      name: row.name,
      action: 'deleted',
    });
  });
}
