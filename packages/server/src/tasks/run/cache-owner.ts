import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file naming whose repositories a cache folder holds. */
const OWNER_FILE = 'signalbox-deployment';

/**
 * Makes a folder of repository caches (`repos/`) the caches of `owner`: repository ids are one server database's
 * own, so caches left there for another (the data directory kept while the database was replaced, a restore into a
 * new one, a runner registered again with another server) would be taken for this one's repositories of the same
 * ids, and a task's clone borrows every object of its cache, the other repositories' included. The folder names the
 * owner it belongs to; when that is another one, everything in it is removed before any task runs. A folder from
 * before it was named is taken as the owner's.
 */
export function claimCacheFolder(dir: string, owner: string): 'kept' | 'cleared' {
  const file = join(dir, OWNER_FILE);
  let named: string | null = null;
  try {
    named = readFileSync(file, 'utf8').trim();
  } catch {
    // No folder yet, or one from before it was named.
  }
  const cleared = named !== null && named !== owner;
  if (cleared) {
    // Out of the way at once (one rename), then removed.
    const old = `${dir}.other-${process.pid}-${Date.now()}`;
    renameSync(dir, old);
    rmSync(old, { recursive: true, force: true });
  }
  if (named !== owner) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, `${owner}\n`);
  }
  return cleared ? 'cleared' : 'kept';
}
