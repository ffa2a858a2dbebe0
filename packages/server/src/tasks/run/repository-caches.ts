import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../../db';
import { deploymentId } from '../../db/options';
import type { Deps } from '../../deps';
import { claimCacheFolder } from './cache-owner';
import { removeRepositoryCache } from './git';

/** Where the server keeps its repositories' caches and working copies (see checkoutRepository). */
export const reposCacheOf = (dataDir: string) => join(dataDir, 'repos');

/** The repository ids a folder's entries name (`repo_<id>.git`, `repo_<id>`); none when it cannot be read. */
function namedIds(dir: string, pattern: RegExp): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const id = pattern.exec(name)?.[1];
    return id ? [Number(id)] : [];
  });
}

/**
 * Removes what the server keeps of repositories whose rows are gone (deleted, or their project deleted, here or by
 * another server on the database): the cache under <dataDir>/repos and the kept working copies. A deleted private
 * repository's files stay on the server no longer than this takes to run. Answers the ids whose files it removed.
 */
export async function sweepRepositoryCaches(db: Db, dataDir: string): Promise<number[]> {
  const dir = reposCacheOf(dataDir);
  const ids = [
    ...new Set([
      ...namedIds(dir, /^repo_(\d{1,15})\.git$/),
      ...namedIds(join(dir, 'checkouts'), /^repo_(\d{1,15})$/),
    ]),
  ];
  const existing = new Set<number>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('repository')
      .select('id')
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const row of rows) existing.add(Number(row.id));
  }
  const gone = ids.filter((id) => !existing.has(id));
  for (const id of gone) await removeRepositoryCache(dir, id);
  return gone;
}

/**
 * `sweepRepositoryCaches` after a repository or project is deleted: a failure is logged, and the next retention
 * pass tries again, rather than failing the delete that is done.
 */
export async function forgetRepositoryFiles(deps: Pick<Deps, 'db' | 'config' | 'log'>) {
  try {
    await sweepRepositoryCaches(deps.db, deps.config.dataDir);
  } catch (err) {
    deps.log.warn({ err: (err as Error).message }, 'removing the caches of deleted repositories failed');
  }
}

/**
 * Makes <dataDir>/repos this database's (see claimCacheFolder): caches another database's server left there are
 * removed before any task runs.
 */
export async function claimRepositoryCaches(db: Db, dataDir: string): Promise<'kept' | 'cleared'> {
  return claimCacheFolder(reposCacheOf(dataDir), await deploymentId(db));
}
