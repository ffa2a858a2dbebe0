import {
  coded,
  noRefs,
  type OptionsSource,
  optionsSourceSchema,
  type Refs,
  type Thing,
} from '@signalbox/contracts';
import { sql } from 'kysely';
import type { Db } from '../db';
import type { Database } from '../db/tables';
import { badRequest, conflict } from '../lib/errors';

type ProjectTable =
  | 'access_key'
  | 'repository'
  | 'inventory'
  | 'environment'
  | 'template'
  | 'view'
  | 'option_list'
  | 'workflow'
  | 'integration'
  | 'schedule';

/**
 * Checks that a referenced object exists in the same project; a missing one or one of another project is a 400
 * naming the field (ids of another project are never followed). `field` is the request field the error names
 * (default: the label in snake case).
 */
export async function assertInProject(
  db: Db,
  table: ProjectTable,
  id: number | null | undefined,
  projectId: number,
  what: Thing,
  field: string,
) {
  if (id == null) return;
  let query = db
    .selectFrom(table as keyof Database & ProjectTable)
    .select('id')
    .where('id', '=', id)
    .where('project_id', '=', projectId);
  // Environment secrets live in access_key too, but only key-store keys may be referenced.
  if (table === 'access_key') query = query.where(sql.ref('owner'), '=', '');
  const row = await query.executeTakeFirst();
  if (!row)
    throw badRequest(coded('not_in_project', { what, id }), { [field]: coded('not_found', { what }) });
}

export type RefKind =
  | 'key'
  | 'repository'
  | 'inventory'
  | 'environment'
  | 'template'
  | 'view'
  | 'option_list';

/** Objects of the project that use the given object (answered by GET …/{id}/refs, and by a 409 on delete). */
export async function findRefs(db: Db, projectId: number, kind: RefKind, id: number): Promise<Refs> {
  const refs = noRefs();
  const templates = (
    column:
      | 'inventory_id'
      | 'repository_id'
      | 'environment_id'
      | 'vault_key_id'
      | 'build_template_id'
      | 'view_id',
  ) =>
    db
      .selectFrom('template')
      .select(['id', 'name'])
      .where('project_id', '=', projectId)
      .where(column, '=', id)
      .execute();
  switch (kind) {
    case 'key': {
      refs.templates = both(
        await templates('vault_key_id'),
        await surveyTemplates(db, projectId, (source) => source.type === 'http' && source.key_id === id),
      );
      refs.inventories = await db
        .selectFrom('inventory')
        .select(['id', 'name'])
        .where('project_id', '=', projectId)
        .where((eb) => eb.or([eb('ssh_key_id', '=', id), eb('become_key_id', '=', id)]))
        .execute();
      refs.repositories = await db
        .selectFrom('repository')
        .select(['id', 'name'])
        .where('project_id', '=', projectId)
        .where('ssh_key_id', '=', id)
        .execute();
      refs.integrations = await db
        .selectFrom('integration')
        .select(['id', 'name'])
        .where('project_id', '=', projectId)
        .where('auth_secret_id', '=', id)
        .execute();
      break;
    }
    case 'repository': {
      refs.templates = await templates('repository_id');
      refs.inventories = await db
        .selectFrom('inventory')
        .select(['id', 'name'])
        .where('project_id', '=', projectId)
        .where('repository_id', '=', id)
        .execute();
      refs.schedules = await db
        .selectFrom('schedule')
        .select(['id', 'name'])
        .where('project_id', '=', projectId)
        .where('repository_id', '=', id)
        .execute();
      break;
    }
    case 'inventory':
      refs.templates = both(
        await templates('inventory_id'),
        await surveyTemplates(
          db,
          projectId,
          (source) =>
            (source.type === 'inventory_hosts' || source.type === 'inventory_groups') &&
            source.inventory_id === id,
        ),
      );
      break;
    case 'environment':
      refs.templates = await templates('environment_id');
      break;
    case 'view':
      refs.templates = await templates('view_id');
      break;
    case 'option_list':
      refs.templates = await surveyTemplates(db, projectId, (source) =>
        source.type === 'option_list' ? source.option_list_id === id : false,
      );
      break;
    case 'template': {
      refs.templates = (await templates('build_template_id')).filter((t) => t.id !== id);
      refs.integrations = await db
        .selectFrom('integration')
        .select(['id', 'name'])
        .where('project_id', '=', projectId)
        .where('template_id', '=', id)
        .execute();
      break;
    }
  }
  return refs;
}

/** Two lists of templates as one, each template once, by id. */
function both(a: { id: number; name: string }[], b: { id: number; name: string }[]) {
  const ids = new Set(a.map((t) => t.id));
  return [...a, ...b.filter((t) => !ids.has(t.id))].sort((x, y) => x.id - y.id);
}

/** The project's templates whose survey has a variable with an options source `uses` accepts. */
async function surveyTemplates(db: Db, projectId: number, uses: (source: OptionsSource) => boolean) {
  const rows = await db
    .selectFrom('template')
    .select(['id', 'name', 'survey_vars'])
    .where('project_id', '=', projectId)
    .orderBy('id')
    .execute();
  return rows
    .filter((row) => {
      let vars: unknown;
      try {
        vars = JSON.parse(row.survey_vars);
      } catch {
        return false;
      }
      if (!Array.isArray(vars)) return false;
      return vars.some((v) => {
        const parsed = optionsSourceSchema.safeParse((v as { options_source?: unknown })?.options_source);
        return parsed.success && uses(parsed.data);
      });
    })
    .map(({ id, name }) => ({ id, name }));
}

export const hasRefs = (refs: Refs) => Object.values(refs).some((list) => list.length > 0);

/** Refuses to delete an object in use: 409 with the dependents listed under `refs`. */
export async function assertUnused(db: Db, projectId: number, kind: RefKind, id: number) {
  const refs = await findRefs(db, projectId, kind, id);
  if (hasRefs(refs)) {
    throw conflict(coded('in_use', { what: kind }), { refs });
  }
}
