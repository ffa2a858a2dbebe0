import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import {
  bareCopy,
  filesContaining,
  type GitHttpServer,
  startGitHttpServer,
  watchArgv,
} from '../../../test/support/git-servers';
import type { Client } from '../../../test/support/harness';
import {
  gitRepo,
  insertLocalInventory,
  insertRepository,
  insertTemplate,
  toolsOnPath,
} from '../../../test/support/task-fixtures';
import { runTask, useHarnessWithProject } from '../../../test/support/task-runs';

/**
 * Real tasks using keys whose secret the server reads at task time: a vault password from an environment
 * variable and an inventory ssh key from a file (ansible-playbook), a git password from an environment variable
 * (a checkout over HTTP Basic auth). The values reach the task through the same channels as stored secrets and
 * never its output, the argv of any process, or a file left behind; a variable or file that is missing fails
 * the task with a line naming it.
 */

const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;
const suffix = randomBytes(4).toString('hex').toUpperCase();
const VAULT_VAR = `SIGNALBOX_KEY_VAULT_${suffix}`;
const GIT_VAR = `SIGNALBOX_KEY_GIT_${suffix}`;
const VAULT_PASSWORD = secret('vault-pw');
const HTTP_PASSWORD = secret('http-pw');
const PASSPHRASE = secret('passphrase');
const HTTP_USER = 'gituser';

/** Made when the file loads: the harness's settings name the key files directory before any hook runs. */
const fixtures = mkdtempSync(join(tmpdir(), 'sb-key-sources-'));
const keyFiles = join(fixtures, 'keys');
let http: GitHttpServer;
let playbookRepo: string;
let privateKey: string;
let fingerprint: string;
const made: string[] = [];

beforeAll(async () => {
  mkdirSync(join(keyFiles, 'deploy'), { recursive: true });
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-f', join(fixtures, 'id')]);
  privateKey = readFileSync(join(fixtures, 'id'), 'utf8');
  fingerprint = execFileSync('ssh-keygen', ['-lf', join(fixtures, 'id.pub')])
    .toString()
    .split(' ')[1]!;
  rmSync(join(fixtures, 'id'));
  writeFileSync(join(keyFiles, 'deploy', 'id_ed25519'), privateKey, { mode: 0o600 });

  const vaultFile = join(fixtures, 'vault-pass');
  writeFileSync(vaultFile, VAULT_PASSWORD);
  const vaulted = execFileSync('ansible-vault', [
    'encrypt_string',
    '--vault-password-file',
    vaultFile,
    'vaulted-plain-value',
    '--name',
    'vaulted',
  ]).toString();
  rmSync(vaultFile);
  playbookRepo = gitRepo({
    'site.yml': `- hosts: all
  gather_facts: false
  vars_files:
    - vaulted.yml
  tasks:
    - name: keys in the agent
      command: ssh-add -l
      register: agent
    - debug:
        msg: "agent has {{ agent.stdout }}"
    - debug:
        msg: "vaulted says {{ vaulted }}"
`,
    'vaulted.yml': vaulted,
  });
  made.push(playbookRepo);
  const httpWork = gitRepo({ 'run.sh': 'echo "hello over http"\n' });
  made.push(httpWork);
  bareCopy(httpWork, join(fixtures, 'http', 'repo.git'));
  http = await startGitHttpServer(join(fixtures, 'http'), { user: HTTP_USER, password: HTTP_PASSWORD });
  process.env[VAULT_VAR] = VAULT_PASSWORD;
  process.env[GIT_VAR] = HTTP_PASSWORD;
});

afterAll(async () => {
  delete process.env[VAULT_VAR];
  delete process.env[GIT_VAR];
  await http?.close();
  for (const dir of [fixtures, ...made]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each(testDialects())('tasks with keys read on the server, on $name', (dialect) => {
  const p = useHarnessWithProject(dialect, { maxParallelTasks: 10, keyFilesDir: keyFiles });
  let admin: Client;

  beforeAll(async () => {
    admin = await p.h.userClient({ admin: true });
  });

  /** An admin creates a key reading its secret from `source` (env or file); its id. */
  async function serverKey(body: Record<string, unknown>) {
    const res = await admin.post(`/api/project/${p.projectId}/keys`, {
      name: `key-${randomBytes(3).toString('hex')}`,
      ...body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  }

  /** Runs a template's task while sampling argv; checks that no secret shows in output, argv or files. */
  async function runWatched(templateId: number) {
    const since = Date.now() - 1000;
    const argv = watchArgv();
    const result = await runTask(
      p.h,
      p.owner,
      p.projectId,
      { template_id: templateId },
      { timeoutMs: 60_000 },
    );
    const seen = argv.stop();
    const secrets = [VAULT_PASSWORD, HTTP_PASSWORD, PASSPHRASE, privateKey.split('\n')[1]!];
    for (const s of secrets) {
      for (const line of result.out) expect(line).not.toContain(s);
      for (const cmd of seen) expect(cmd).not.toContain(s);
      for (const line of p.h.logLines) expect(line).not.toContain(s);
    }
    expect(filesContaining(p.h.dataDir, secrets)).toEqual([]);
    // The test's own fixtures (the server's key files among them) hold the secrets on purpose.
    const leftBehind = filesContaining(tmpdir(), secrets, since).filter(
      (path) => !path.startsWith(`${fixtures}/`),
    );
    expect(leftBehind).toEqual([]);
    return result;
  }

  /** An Ansible template whose inventory uses an ssh key from a file and whose vault password a variable holds. */
  async function playbookWithServerKeys() {
    const vaultKey = await serverKey({
      type: 'login_password',
      source_storage_type: 'env',
      source_storage_key: VAULT_VAR,
    });
    const sshKey = await serverKey({
      type: 'ssh',
      ssh: { login: '', passphrase: PASSPHRASE },
      source_storage_type: 'file',
      source_storage_key: 'deploy/id_ed25519',
    });
    const inventory = await insertLocalInventory(p.h.deps, p.projectId, { ssh_key_id: sshKey });
    const repo = await insertRepository(p.h.deps, p.projectId, { git_url: playbookRepo });
    return insertTemplate(p.h.deps, p.projectId, {
      app: 'ansible',
      playbook: 'site.yml',
      repository_id: repo,
      inventory_id: inventory,
      vault_key_id: vaultKey,
    });
  }

  it('runs a playbook with a vault password from a variable and an ssh key from a file', async () => {
    const tpl = await playbookWithServerKeys();
    const { done, out } = await runWatched(tpl);
    const text = out.join('\n');
    expect(done.status, text).toBe('success');
    expect(text).toContain('vaulted says vaulted-plain-value');
    expect(text).toContain(fingerprint);
  });

  it('loads the key into an agent that listens a moment after its socket appears', async () => {
    // An agent binds its socket (the file appears) before it listens: this one waits half a second in between.
    const slow = toolsOnPath({
      'ssh-agent': () => `#!/bin/bash
sock=""; prev=""
for a in "$@"; do [ "$prev" = "-a" ] && sock="$a"; prev="$a"; done
python3 -c 'import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
time.sleep(0.5)
s.close()
os.unlink(sys.argv[1])' "$sock"
exec /usr/bin/ssh-agent "$@"
`,
    });
    try {
      const tpl = await playbookWithServerKeys();
      const { done, out } = await runTask(
        p.h,
        p.owner,
        p.projectId,
        { template_id: tpl },
        { timeoutMs: 60_000 },
      );
      expect(done.status, out.join('\n')).toBe('success');
      expect(out.join('\n')).toContain(fingerprint);
    } finally {
      slow.restore();
    }
  });

  it('checks out over HTTP with a git password from a variable', async () => {
    const key = await serverKey({
      type: 'login_password',
      login_password: { login: HTTP_USER },
      source_storage_type: 'env',
      source_storage_key: GIT_VAR,
    });
    const repo = await insertRepository(p.h.deps, p.projectId, {
      git_url: `${http.base}/repo.git`,
      ssh_key_id: key,
    });
    const before = http.requests.length;
    const { done, out } = await runWatched(
      await insertTemplate(p.h.deps, p.projectId, { repository_id: repo }),
    );
    expect(done.status, out.join('\n')).toBe('success');
    expect(out).toContain('hello over http');
    expect(http.requests.slice(before).some((r) => r.user === HTTP_USER && r.status === 200)).toBe(true);
  });

  it('fails the task naming a variable that is not set, or a file that is gone', async () => {
    const missingVar = `SIGNALBOX_KEY_MISSING_${suffix}`;
    const envKey = await serverKey({
      name: 'Missing variable',
      type: 'login_password',
      login_password: { login: HTTP_USER },
      source_storage_type: 'env',
      source_storage_key: missingVar,
    });
    const repo = await insertRepository(p.h.deps, p.projectId, {
      git_url: `${http.base}/repo.git`,
      ssh_key_id: envKey,
    });
    let run = await runWatched(await insertTemplate(p.h.deps, p.projectId, { repository_id: repo }));
    expect(run.done.status).toBe('error');
    expect(run.out.at(-1)).toBe(
      `Key "Missing variable": Environment variable ${missingVar} is not set on the server`,
    );

    const gone = join(keyFiles, 'deploy', 'gone');
    writeFileSync(gone, privateKey, { mode: 0o600 });
    const fileKey = await serverKey({
      name: 'Gone file',
      type: 'ssh',
      ssh: { passphrase: PASSPHRASE },
      source_storage_type: 'file',
      source_storage_key: gone,
    });
    rmSync(gone);
    const inventory = await insertLocalInventory(p.h.deps, p.projectId, { ssh_key_id: fileKey });
    const playbook = await insertRepository(p.h.deps, p.projectId, { git_url: playbookRepo });
    run = await runWatched(
      await insertTemplate(p.h.deps, p.projectId, {
        app: 'ansible',
        playbook: 'site.yml',
        repository_id: playbook,
        inventory_id: inventory,
      }),
    );
    expect(run.done.status).toBe('error');
    expect(run.out.at(-1)).toBe(`Key "Gone file": File ${gone} does not exist on the server`);
  });
});
