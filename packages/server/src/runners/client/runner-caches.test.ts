import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRegistry } from '../../lib/apps';
import type { RunnerSettings } from './files';
import { RunnerProcess, runnerCacheOwner } from './runner';

/** A port nothing listens on: the runner's connection is refused and it waits to reconnect. */
async function closedPort() {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

// A runner's repository caches are those of its registration: registered again (with another server, or afresh with
// the same one) it starts without the caches of the repositories it served before, whose ids name other repositories
// now.
describe('the repository caches of a runner', () => {
  let dir: string;
  let url: string;
  const logged: string[] = [];
  const repos = () => join(dir, 'work', 'repos');
  const settings = (id: number, token: string): RunnerSettings => ({
    url,
    id,
    token,
    tags: [],
    max_parallel: 1,
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'signalbox-runner-caches-'));
    url = `http://127.0.0.1:${await closedPort()}`;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts the runner of `registration` in the folder and shuts it down: what a start does to the folder is done. */
  async function startAndStop(registration: RunnerSettings) {
    const runner = new RunnerProcess({
      dir,
      settings: registration,
      privateKey: '',
      apps: appRegistry(),
      isolation: 'session',
      confinement: { mode: 'off', reason: 'test' },
      outputLimit: 0,
      webRoot: url,
      log: (line) => logged.push(line),
    });
    const exited = runner.run();
    await runner.shutdown(false);
    expect(await exited).toBe(0);
  }

  /** A cache and a kept working copy, as a task from repository 1 leaves them. */
  function cachedRepository() {
    for (const path of [join(repos(), 'repo_1.git'), join(repos(), 'checkouts', 'repo_1')]) {
      mkdirSync(path, { recursive: true });
      writeFileSync(join(path, 'HEAD'), 'ref: refs/heads/main\n');
    }
  }

  it('keeps the caches across restarts of one registration', async () => {
    await startAndStop(settings(1, 'token-a'));
    cachedRepository();
    await startAndStop(settings(1, 'token-a'));
    expect(existsSync(join(repos(), 'repo_1.git', 'HEAD'))).toBe(true);
    expect(existsSync(join(repos(), 'checkouts', 'repo_1', 'HEAD'))).toBe(true);
  });

  it('removes them when the runner was registered again, even with the same id', async () => {
    cachedRepository();
    await startAndStop(settings(1, 'token-b'));
    expect(readdirSync(repos())).toEqual(['signalbox-deployment']);
    expect(logged).toContain('Removed the repository caches of an earlier registration');
    cachedRepository();
    await startAndStop({ ...settings(1, 'token-b'), url: `${url}/other` });
    expect(readdirSync(repos())).toEqual(['signalbox-deployment']);
  });

  it('names a registration by a digest, never by its token', () => {
    const owner = runnerCacheOwner(settings(7, 'secret-token-value'));
    expect(owner).toMatch(/^runner [0-9a-f]{64}$/);
    expect(owner).not.toContain('secret-token-value');
    expect(runnerCacheOwner(settings(8, 'secret-token-value'))).not.toBe(owner);
  });
});
