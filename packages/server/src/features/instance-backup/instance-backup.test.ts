import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURE_SECRET, fillProject } from '../../../test/support/backup-fixture';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { readBackup } from '../project-backup/backup';
import { listProjects } from '../projects/projects.store';
import { listMembers } from '../team/team.store';
import { insertUser } from '../users/users.service';
import { listUsers } from '../users/users.store';
import { runInstanceBackupCommand } from './instance-backup.cli';

/** Runs `signalbox backup|restore` against a harness's database; returns the exit code and what it printed. */
async function cli(h: Harness, command: 'backup' | 'restore', file: string) {
  const out: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
  const error = vi.spyOn(console, 'error').mockImplementation((line: string) => void out.push(line));
  try {
    const code = await runInstanceBackupCommand(command, h.deps, ['--file', file]);
    return { code, out: out.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

/** Users as a backup keeps them: everything but ids, times and password hashes. */
const users = async (h: Harness) =>
  (await listUsers(h.deps.db))
    .map(({ id, created, password, ...user }) => user)
    .sort((a, b) => a.username.localeCompare(b.username));

/** Each project's backup and members, by project name. */
const projects = async (h: Harness) =>
  Promise.all(
    (await listProjects(h.deps.db, 0, true)).map(async (p) => ({
      backup: await readBackup(h.deps.db, p.id),
      members: (await listMembers(h.deps.db, p.id)).map((m) => [m.username, m.role]).sort(),
    })),
  );

describe.each(testDialects())('signalbox backup / restore ($name)', (dialect) => {
  let source: Harness;
  let target: Harness;
  let file: string;
  let ownerPassword: string;

  beforeAll(async () => {
    source = await createHarness(dialect);
    target = await createHarness(dialect);
    file = join(source.dataDir, 'instance-backup.json');
    await source.userClient({ admin: true, username: 'root-admin' });
    const owner = await source.userClient({ can_create_project: true, username: 'alice' });
    ownerPassword = owner.password;
    const alpha = await source.projectWithTeam(owner, 'Alpha');
    await fillProject(source.deps, alpha.projectId, `instance-${dialect.name}`);
    await source.projectWithTeam(owner, 'Beta');
    await insertUser(source.deps.db, source.deps.dialect, {
      username: 'sso-bob',
      name: 'Bob',
      email: 'bob@example.test',
      password: 'external',
      admin: false,
      alert: true,
      external: true,
      can_create_project: false,
    });
  });
  afterAll(async () => {
    await source?.close();
    await target?.close();
  });

  it('writes every user without password and every project, readable by the owner only', async () => {
    const { code, out } = await cli(source, 'backup', file);
    expect(code).toBe(0);
    expect(out).toContain('Backed up 9 users and 2 projects');
    expect(out).toContain('without that key the stored secrets cannot be read');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(FIXTURE_SECRET);
    // No password field (a vault of type "password" is no secret) and no password hash.
    expect(text).not.toMatch(/"password"\s*:|\$2[aby]\$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('restores the same users, projects and members into a new instance; passwords are to be set', async () => {
    const { code, out } = await cli(target, 'restore', file);
    expect(code, out).toBe(0);
    expect(out).toContain('Restored 2 projects and 9 users');
    expect(out).toMatch(/Users without a password .*: .*alice/);
    expect(out).not.toMatch(/Users without a password .*sso-bob/);
    expect(await users(target)).toEqual(await users(source));
    const byName = (a: { backup: { meta: { name: string } } }, b: { backup: { meta: { name: string } } }) =>
      a.backup.meta.name.localeCompare(b.backup.meta.name);
    expect((await projects(target)).sort(byName)).toEqual((await projects(source)).sort(byName));
    // The old password went nowhere.
    const signIn = await target
      .anonymous()
      .post('/api/auth/login', { auth: 'alice', password: ownerPassword });
    expect(signIn.statusCode).toBe(401);
  });

  it('refuses an instance that already has projects, writing nothing', async () => {
    const before = await users(target);
    const { code, out } = await cli(target, 'restore', file);
    expect(code).toBe(1);
    expect(out).toBe('This instance already has projects: restore into a new instance');
    expect(await users(target)).toEqual(before);
    expect(await listProjects(target.deps.db, 0, true)).toHaveLength(2);
  });

  it('refuses a file that is not an instance backup', async () => {
    const project = join(source.dataDir, 'project-backup.json');
    writeFileSync(project, JSON.stringify((await projects(source))[0].backup));
    const { code, out } = await cli(target, 'restore', project);
    expect(code).toBe(1);
    expect(out).toMatch(/^Not an instance backup: format /);
  });
});
