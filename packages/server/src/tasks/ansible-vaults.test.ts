import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  commitFiles,
  gitRepo,
  insertEnvironment,
  insertKey,
  insertLocalInventory,
  insertRepository,
  insertTemplate,
} from '../../test/support/task-fixtures';
import { harnessWithProject, runTask } from '../../test/support/task-runs';

/**
 * A template's vault reaches ansible-playbook under its own name, its password from a key or printed by a script.
 * ANSIBLE_VAULT_ID_MATCH makes Ansible open a vaulted value only with the secret of the vault id it was encrypted
 * for, so a name that did not arrive fails the run.
 */
describe.each(testDialects())('ansible vaults on $name', (dialect) => {
  const PASSWORD = 'prod-vault-s3cret';
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let workDir: string;
  let repoDir: string;
  let repository: number;
  let inventory: number;
  let environment: number;
  let vaultKey: number;

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect));
    workDir = mkdtempSync(join(tmpdir(), 'sb-vaults-'));
    const passwordFile = join(workDir, 'password');
    writeFileSync(passwordFile, PASSWORD);
    const vaulted = execFileSync('ansible-vault', [
      'encrypt_string',
      '--vault-id',
      `prod@${passwordFile}`,
      'opened-by-prod',
      '--name',
      'vaulted',
    ]).toString();
    rmSync(passwordFile);
    // A script outside any repository, as an administrator might install one on the server.
    const installed = join(workDir, 'installed-vault-pass.sh');
    writeFileSync(installed, `#!/bin/sh\necho '${PASSWORD}'\n`);
    chmodSync(installed, 0o755);
    repoDir = gitRepo({
      'site.yml': `- hosts: all
  gather_facts: false
  vars_files:
    - vaulted.yml
  tasks:
    - debug:
        msg: "vault says {{ vaulted }}"
`,
      'vaulted.yml': vaulted,
      'scripts/vault-pass.sh': `#!/bin/sh\necho '${PASSWORD}'\n`,
    });
    // A link in the repository that leads out of it.
    symlinkSync(installed, join(repoDir, 'outside.sh'));
    commitFiles(repoDir, {}, 'a link leading out');
    repository = await insertRepository(h.deps, projectId, { git_url: repoDir });
    inventory = await insertLocalInventory(h.deps, projectId);
    environment = await insertEnvironment(h.deps, projectId, { env: { ANSIBLE_VAULT_ID_MATCH: 'True' } });
    vaultKey = await insertKey(h.deps, projectId, {
      type: 'login_password',
      secret: { login: '', password: PASSWORD },
    });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  const run = async (vault: { vault_name?: string; vault_script?: string; vault_key_id?: number }) => {
    const template = await insertTemplate(h.deps, projectId, {
      app: 'ansible',
      playbook: 'site.yml',
      repository_id: repository,
      inventory_id: inventory,
      environment_id: environment,
      ...vault,
    });
    const { done, out } = await runTask(h, owner, projectId, { template_id: template });
    return { status: done.status, text: out.join('\n') };
  };

  it('opens a vault named prod with its key', async () => {
    const { status, text } = await run({ vault_name: 'prod', vault_key_id: vaultKey });
    expect(status, text).toBe('success');
    expect(text).toContain('vault says opened-by-prod');
    expect(text).not.toContain(PASSWORD);
  });

  it('fails when the vault has another name: the name is what Ansible matches', async () => {
    const { status, text } = await run({ vault_key_id: vaultKey });
    expect(status, text).toBe('error');
    expect(text).not.toContain('vault says opened-by-prod');
  });

  it('opens it with a password script in the repository, or an absolute path on the server', async () => {
    for (const script of ['scripts/vault-pass.sh', join(workDir, 'installed-vault-pass.sh')]) {
      const { status, text } = await run({ vault_name: 'prod', vault_script: script });
      expect(status, `${script}: ${text}`).toBe('success');
      expect(text).toContain('vault says opened-by-prod');
      expect(text).not.toContain(PASSWORD);
    }
  });

  it('runs nothing for a script that is missing or whose real path leaves the repository', async () => {
    for (const [script, message] of [
      [
        'scripts/missing.sh',
        'Vault script "scripts/missing.sh" does not exist in the repository: nothing was run',
      ],
      [
        'outside.sh',
        'Vault script "outside.sh" leads outside the repository (a symbolic link?): nothing was run',
      ],
      [
        '/nonexistent/vault-pass',
        'Vault script "/nonexistent/vault-pass" is not a file on this machine: nothing was run',
      ],
    ] as const) {
      const { status, text } = await run({ vault_name: 'prod', vault_script: script });
      expect(status, text).toBe('error');
      expect(text).toContain(message);
      expect(text).not.toContain('PLAY [all]');
    }
  });

  it('keeps the vault password out of the data directory (database included)', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        return entry.isDirectory() ? files(path) : entry.isFile() ? [path] : [];
      });
    const holding = files(h.dataDir).filter((file) => readFileSync(file, 'latin1').includes(PASSWORD));
    expect(holding).toEqual([]);
  });
});
