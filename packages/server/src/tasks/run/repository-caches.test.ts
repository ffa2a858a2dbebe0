import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { insertTemplate } from '../../../test/support/task-fixtures';
import { insertGitRepository, runTask, useHarnessWithProject } from '../../../test/support/task-runs';
import { deploymentId } from '../../db/options';
import { createRetention } from '../retention';
import { claimRepositoryCaches } from './repository-caches';

// What the server keeps of a repository (its cache, the working copies kept for the next task) lives as long as the
// repository: deleting it, or its project, removes them, and a retention pass removes those of repositories another
// server deleted.
describe.each(testDialects())('the files kept of repositories on $name', (dialect) => {
  const p = useHarnessWithProject(dialect);
  const repos = () => join(p.h.dataDir, 'repos');
  const keptOf = (id: number) => [join(repos(), `repo_${id}.git`), join(repos(), 'checkouts', `repo_${id}`)];

  /** A file:// repository of the project with one task run from it: its cache and a kept working copy exist. */
  async function usedRepository(projectId = p.projectId) {
    const { id } = await insertGitRepository(
      p.h.deps,
      projectId,
      { 'run.sh': 'echo ran\n' },
      { fileUrl: true },
    );
    const template = await insertTemplate(p.h.deps, projectId, {
      repository_id: id,
      app: 'bash',
      playbook: 'run.sh',
    });
    const { done } = await runTask(p.h, p.owner, projectId, { template_id: template }, { timeoutMs: 15_000 });
    expect(done.status).toBe('success');
    for (const path of keptOf(id)) expect(existsSync(path), path).toBe(true);
    return { id, template };
  }

  it('removes a deleted repository’s cache and kept working copies, and only its own', async () => {
    const kept = await usedRepository();
    const deleted = await usedRepository();
    expect((await p.owner.del(`/api/project/${p.projectId}/templates/${deleted.template}`)).statusCode).toBe(
      204,
    );
    expect((await p.owner.del(`/api/project/${p.projectId}/repositories/${deleted.id}`)).statusCode).toBe(
      204,
    );
    for (const path of keptOf(deleted.id)) expect(existsSync(path), path).toBe(false);
    for (const path of keptOf(kept.id)) expect(existsSync(path), path).toBe(true);
  });

  it('removes the repositories’ files of a deleted project', async () => {
    const other = await p.h.projectWithTeam(p.owner, 'Doomed');
    const { id } = await usedRepository(other.projectId);
    expect((await p.owner.del(`/api/project/${other.projectId}`)).statusCode).toBe(204);
    for (const path of keptOf(id)) expect(existsSync(path), path).toBe(false);
  });

  it("are this database's: a start finds another database's caches and removes them all", async () => {
    const ours = await deploymentId(p.h.deps.db);
    const owner = join(repos(), 'signalbox-deployment');
    // The server's start named the folder.
    expect(readFileSync(owner, 'utf8').trim()).toBe(ours);
    const kept = await usedRepository();
    expect(await claimRepositoryCaches(p.h.deps.db, p.h.dataDir)).toBe('kept');
    for (const path of keptOf(kept.id)) expect(existsSync(path), path).toBe(true);
    // As a database replaced under the same data directory leaves them: its repository ids are this one's too.
    writeFileSync(owner, 'another-deployment\n');
    expect(await claimRepositoryCaches(p.h.deps.db, p.h.dataDir)).toBe('cleared');
    for (const path of keptOf(kept.id)) expect(existsSync(path), path).toBe(false);
    expect(readdirSync(repos())).toEqual(['signalbox-deployment']);
    expect(readFileSync(owner, 'utf8').trim()).toBe(ours);
    // The next task of the repository clones it anew.
    const again = await usedRepository();
    for (const path of keptOf(again.id)) expect(existsSync(path), path).toBe(true);
  });

  it('a retention pass removes the files of repositories deleted elsewhere, and leaves other entries', async () => {
    const kept = await usedRepository();
    // As another server on the database would leave them: files of ids no repository has (any more).
    const goneId = 9_000_000 + Math.floor(Math.random() * 1000);
    mkdirSync(join(repos(), `repo_${goneId}.git`, 'objects'), { recursive: true });
    writeFileSync(join(repos(), `repo_${goneId}.git`, 'HEAD'), 'ref: refs/heads/main\n');
    mkdirSync(join(repos(), 'checkouts', `repo_${goneId + 1}`, 'branch', 'listing'), { recursive: true });
    writeFileSync(join(repos(), 'unrelated.txt'), 'not a cache');
    const retention = createRetention(p.h.deps, { firstDelay: 60_000 });
    await retention.run();
    await retention.close();
    expect(existsSync(join(repos(), `repo_${goneId}.git`))).toBe(false);
    expect(existsSync(join(repos(), 'checkouts', `repo_${goneId + 1}`))).toBe(false);
    for (const path of keptOf(kept.id)) expect(existsSync(path), path).toBe(true);
    expect(readdirSync(repos())).toContain('unrelated.txt');
  });
});
