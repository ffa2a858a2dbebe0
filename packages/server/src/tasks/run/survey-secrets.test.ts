import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import type { Client, Harness } from '../../../test/support/harness';
import { insertLocalInventory, insertTemplate, toolsOnPath } from '../../../test/support/task-fixtures';
import { harnessWithProject, insertGitRepository, runTask } from '../../../test/support/task-runs';
import { stripAnsi } from '../../lib/ansi';

const SECRET = 'survey-s3cret-Value';
const sha = createHash('sha256').update(SECRET).digest('hex');
/** Prints the value (the output masks it) and its hash (proving it arrived intact). */
const show = (variable: string) =>
  `echo "value=${variable}"; echo "sha=$(printf %s "${variable}" | sha256sum | cut -c1-64)"`;

describe.each(testDialects())('secret survey values reach every app on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;
  let inventoryId: number;
  let record: string;
  let payloadMarker: string;
  let payload: string;
  let restorePath = () => {};

  beforeAll(async () => {
    const tf = (log: string) =>
      `#!/bin/bash\necho "$(basename "$0") $*" >> ${log}\nif [ "$1" = plan ]; then ${show('$TF_VAR_db_password')}; echo "No changes."; fi\n`;
    const tools = toolsOnPath({
      terraform: tf,
      tofu: tf,
      pulumi: (log) =>
        `#!/bin/bash\necho "pulumi $*" >> ${log}\n[ "$1" = up ] && { ${show('$db_password')}; }\nexit 0\n`,
    });
    ({ record, restore: restorePath } = tools);
    const bin = tools.bin;
    payloadMarker = join(bin, 'bash-env-ran');
    payload = join(bin, 'payload.sh');
    writeFileSync(payload, `touch ${payloadMarker}\n`);
    chmodSync(payload, 0o755);
    ({ h, owner, projectId } = await harnessWithProject(dialect, { maxParallelTasks: 10 }));
    ({ id: repoId } = await insertGitRepository(h.deps, projectId, {
      'show.sh': `${show('$db_password')}\necho "argv: $*"\n`,
      'site.yml': `- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: msg="value={{ db_password }}"\n    - debug: msg="sha={{ db_password | hash('sha256') }}"\n`,
      'infra/main.tf': '# infra\n',
    }));
    inventoryId = await insertLocalInventory(h.deps, projectId);
  });
  afterAll(async () => {
    restorePath();
    await h?.close();
  });

  const playbooks: Record<string, string> = {
    ansible: 'site.yml',
    bash: 'show.sh',
    terraform: 'infra',
    tofu: 'infra',
    pulumi: 'infra',
  };

  async function run(app: string, secret: Record<string, string>) {
    const template = await insertTemplate(h.deps, projectId, {
      app,
      playbook: playbooks[app],
      repository_id: repoId,
      inventory_id: app === 'ansible' ? inventoryId : null,
      survey_vars: JSON.stringify([{ name: 'db_password', title: 'DB password', type: 'secret' }]),
    });
    const { done, out } = await runTask(
      h,
      owner,
      projectId,
      { template_id: template, secret: JSON.stringify(secret) },
      { statuses: ['success', 'error'] },
    );
    expect(done.status, out.join('\n')).toBe('success');
    return out.map(stripAnsi);
  }

  for (const app of Object.keys(playbooks)) {
    it(`${app}: arrives intact, masked in the output, never in argv`, async () => {
      const out = await run(app, { db_password: SECRET });
      const text = out.join('\n');
      expect(text).toContain(`sha=${sha}`);
      expect(text).toContain('value=**********');
      expect(text).not.toContain(SECRET);
      expect(readFileSync(record, 'utf8')).not.toContain(SECRET);
    });
  }

  it('bash and pulumi pass only survey variables the template declares: a task cannot set BASH_ENV or PATH', async () => {
    for (const app of ['bash', 'pulumi']) {
      const out = await run(app, {
        db_password: SECRET,
        BASH_ENV: payload,
        PATH: '/nonexistent',
      });
      expect(out).toContain('Secret value "BASH_ENV" is not a survey variable of the template: not passed');
      expect(out).toContain('Secret value "PATH" is not a survey variable of the template: not passed');
      expect(out.join('\n')).toContain(`sha=${sha}`);
    }
    expect(existsSync(payloadMarker)).toBe(false);
  });
});
