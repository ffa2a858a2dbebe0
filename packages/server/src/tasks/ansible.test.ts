import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import {
  gitRepo,
  insertKey,
  insertLocalInventory,
  insertRepository,
  insertTemplate,
  outputOf,
  waitForStatus,
} from '../../test/support/task-fixtures';
import { descendantArgs } from '../../test/support/task-pids';
import { harnessWithProject, insertSecretEnvironment } from '../../test/support/task-runs';
import { sharedTempDir } from '../../test/support/task-shared';

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) out.push(...filesUnder(path));
    else if (st.isFile()) out.push(path);
  }
  return out;
}

// ansible-playbook is required (`npm test` installs Debian's ansible-core when missing): never skipped.
describe.each(testDialects())('ansible-playbook tasks on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let outDir: string;
  let repoDir: string;
  let fingerprint: string;
  const secrets = {
    survey: 'survey-s3cret-value',
    varSecret: 'var-s3cret-value',
    envSecret: 'env-s3cret-value',
    become: 'become-s3cret-pass',
    vault: 'vault-s3cret-pass',
    passphrase: 'ssh-s3cret-phrase',
  };
  let privateKey: string;

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect));
    // Where the playbook writes what it saw: shared with the tasks, which see nothing else of the test.
    outDir = sharedTempDir('sb-ansible-out-');
    const keyDir = mkdtempSync(join(tmpdir(), 'sb-key-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', secrets.passphrase, '-f', join(keyDir, 'id')]);
    privateKey = readFileSync(join(keyDir, 'id'), 'utf8');
    fingerprint = execFileSync('ssh-keygen', ['-lf', join(keyDir, 'id.pub')])
      .toString()
      .split(' ')[1]!;
    const vaultFile = join(keyDir, 'vault-pass');
    writeFileSync(vaultFile, secrets.vault);
    const vaulted = execFileSync('ansible-vault', [
      'encrypt_string',
      '--vault-password-file',
      vaultFile,
      'vaulted-plain-value',
      '--name',
      'vaulted',
    ]).toString();
    repoDir = gitRepo({
      'site.yml': `- hosts: all
  gather_facts: false
  vars_files:
    - vaulted.yml
  tasks:
    - name: record what the playbook saw
      copy:
        dest: "{{ out_file }}"
        content: "{{ {'region': region, 'from_task': from_task | default(''), 'survey_secret': survey_secret, 'var_secret': var_secret, 'env_secret': lookup('env', 'ENV_SECRET'), 'plain_env': lookup('env', 'PLAIN_ENV'), 'vaulted': vaulted, 'check': ansible_check_mode, 'diff': ansible_diff_mode, 'task_details': semaphore_vars.task_details} | to_nice_json }}"
      check_mode: false
    - name: keys in the agent
      command: ssh-add -l
      register: agent
      check_mode: false
    - debug:
        msg: "agent has {{ agent.stdout }}"
    - name: print a secret (masked)
      debug:
        msg: "the secret is {{ survey_secret }}"
    - name: hold on so the process list can be read
      command: sleep 1.5
      check_mode: false
`,
      'vaulted.yml': vaulted,
    });
  });
  afterAll(async () => h?.close());

  async function setup(gitUrl: string) {
    const envId = await insertSecretEnvironment(
      h.deps,
      projectId,
      { json: { region: 'eu-1' }, env: { PLAIN_ENV: 'plain' } },
      { vars: { var_secret: secrets.varSecret }, env: { ENV_SECRET: secrets.envSecret } },
    );
    const sshKey = await insertKey(h.deps, projectId, {
      type: 'ssh',
      secret: { login: 'deploy', passphrase: secrets.passphrase, private_key: privateKey },
    });
    const becomeKey = await insertKey(h.deps, projectId, {
      type: 'login_password',
      secret: { login: 'root', password: secrets.become },
    });
    const vaultKey = await insertKey(h.deps, projectId, {
      type: 'login_password',
      secret: { login: '', password: secrets.vault },
    });
    const inv = await insertLocalInventory(h.deps, projectId, {
      ssh_key_id: sshKey,
      become_key_id: becomeKey,
    });
    const repo = await insertRepository(h.deps, projectId, { git_url: gitUrl });
    return insertTemplate(h.deps, projectId, {
      app: 'ansible',
      playbook: 'site.yml',
      repository_id: repo,
      inventory_id: inv,
      environment_id: envId,
      vault_key_id: vaultKey,
      task_params: { allow_debug: true, allow_override_limit: true },
    });
  }

  for (const kind of ['local path', 'file://'] as const) {
    it(`runs a playbook from a ${kind} repository with extra vars, flags and no secret leaks`, async () => {
      const tpl = await setup(kind === 'file://' ? `file://${repoDir}` : repoDir);
      const outFile = join(outDir, `vars-${kind === 'file://' ? 'file' : 'local'}.json`);
      const dry = kind === 'file://';
      const res = await owner.post(`/api/project/${projectId}/tasks`, {
        template_id: tpl,
        message: 'ansible run',
        environment: JSON.stringify({ from_task: 'yes', out_file: outFile }),
        secret: JSON.stringify({ survey_secret: secrets.survey }),
        dry_run: dry,
        diff: dry,
        debug: !dry,
        limit: 'localhost',
      });
      expect(res.statusCode).toBe(201);
      const id = res.json().id;
      const stored = await h.deps.db
        .selectFrom('task')
        .select('secret')
        .where('id', '=', id)
        .executeTakeFirst();
      expect(stored?.secret).toBeTruthy();
      expect(stored?.secret).not.toContain(secrets.survey);

      // While it runs, no secret is in the argv of any process it started.
      const all = Object.values(secrets);
      let sawPlaybook = false;
      for (;;) {
        const t = await h.deps.db.selectFrom('task').select('status').where('id', '=', id).executeTakeFirst();
        const ps = descendantArgs().join('\n');
        if (ps.includes('ansible-playbook')) sawPlaybook = true;
        for (const s of all) expect(ps).not.toContain(s);
        if (['success', 'error', 'stopped'].includes(t!.status)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(sawPlaybook).toBe(true);
      const done = await waitForStatus(h.deps, id, ['success', 'error']);
      const out = await outputOf(h.deps, id);
      expect(done.status, out.join('\n')).toBe('success');
      expect(done.secret).toBeNull();
      const seen = JSON.parse(readFileSync(outFile, 'utf8'));
      expect(seen).toMatchObject({
        region: 'eu-1',
        from_task: 'yes',
        survey_secret: secrets.survey,
        var_secret: secrets.varSecret,
        env_secret: secrets.envSecret,
        plain_env: 'plain',
        vaulted: 'vaulted-plain-value',
        check: dry,
        diff: dry,
      });
      expect(seen.task_details).toMatchObject({
        id,
        message: 'ansible run',
        username: owner.username,
        commit_hash: done.commit_hash,
        inventory_name: 'inventory',
      });
      const text = out.join('\n');
      expect(text).toContain(fingerprint);
      expect(text).toContain('the secret is **********');
      if (!dry) expect(text).toMatch(/ansible-playbook \[core/);
      for (const s of all) expect(text).not.toContain(s);
      // Nothing left behind in the data dir holds a secret (database included).
      for (const file of filesUnder(h.dataDir)) {
        const content = readFileSync(file, 'latin1');
        for (const s of all) expect(content.includes(s), `${s} in ${file}`).toBe(false);
      }
      expect(readdirSync(join(h.dataDir, 'tasks'))).not.toContain(String(id));
    });
  }
});
