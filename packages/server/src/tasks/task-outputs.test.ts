import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import type { Client, Harness } from '../../test/support/harness';
import { insertTemplate, outputOf, waitForStatus } from '../../test/support/task-fixtures';
import {
  harnessWithProject,
  insertGitRepository,
  insertSecretEnvironment,
} from '../../test/support/task-runs';

describe.each(testDialects())('task outputs of real bash tasks on $name', (dialect) => {
  let h: Harness;
  let owner: Client;
  let projectId: number;
  let repoId: number;
  // A file outside the task's folder a task points a symbolic link at.
  const outside = join(mkdtempSync(join(tmpdir(), 'outputs-outside-')), 'elsewhere.json');
  writeFileSync(outside, '{"stolen": "server file"}');

  beforeAll(async () => {
    ({ h, owner, projectId } = await harnessWithProject(dialect, { maxParallelTasks: 10 }));
    ({ id: repoId } = await insertGitRepository(
      h.deps,
      projectId,
      {
        'json.sh':
          'echo "outputs at $SIGNALBOX_OUTPUTS"\nprintf \'{"version": "1.4.2", "artifacts": ["a.tar", "b.tar"]}\' > "$SIGNALBOX_OUTPUTS"\n',
        'lines.sh': 'printf "# built\\nVERSION=2.0\\n\\nCHANNEL=beta=1\\n" > "$SIGNALBOX_OUTPUTS"\n',
        'link.sh': `ln -s ${outside} "$SIGNALBOX_OUTPUTS"\n`,
        'big.sh':
          'head -c 70000 /dev/zero | tr "\\0" "x" | sed "s/^/{\\"v\\": \\"/; s/$/\\"}/" > "$SIGNALBOX_OUTPUTS"\n',
        'bad.sh': 'echo "not outputs at all" > "$SIGNALBOX_OUTPUTS"\n',
        'array.sh': 'echo "[1, 2]" > "$SIGNALBOX_OUTPUTS"\n',
        'dir.sh': 'mkdir "$SIGNALBOX_OUTPUTS"\n',
        // 5,000 levels of nesting in a few KiB: deeper than any JSON the server takes.
        'deep.sh':
          'i=0; s=1; while [ $i -lt 5000 ]; do s="{\\"a\\":$s}"; i=$((i+1)); done; printf "%s" "$s" > "$SIGNALBOX_OUTPUTS"\n',
        'none.sh': 'echo nothing\n',
        'fail.sh': 'echo \'{"partial": true}\' > "$SIGNALBOX_OUTPUTS"\nexit 2\n',
      },
      { name: 'outputs' },
    ));
  });
  afterAll(async () => h?.close());

  async function run(playbook: string, environmentId?: number) {
    const tpl = await insertTemplate(h.deps, projectId, {
      name: playbook,
      repository_id: repoId,
      playbook,
      environment_id: environmentId ?? null,
    });
    const res = await owner.post(`/api/project/${projectId}/tasks`, { template_id: tpl });
    expect(res.statusCode, res.body).toBe(201);
    const done = await waitForStatus(h.deps, res.json().id, ['success', 'error', 'stopped']);
    const answer = (await owner.get(`/api/project/${projectId}/tasks/${done.id}`)).json();
    return { done, answer, out: await outputOf(h.deps, done.id) };
  }

  it('keeps the JSON object a task writes to $SIGNALBOX_OUTPUTS and answers it as outputs', async () => {
    const { done, answer, out } = await run('json.sh');
    expect(done.status, out.join('\n')).toBe('success');
    expect(out.find((l) => l.startsWith('outputs at '))).toBe(
      `outputs at ${join(h.dataDir, 'tasks', String(done.id), 'outputs')}`,
    );
    expect(answer.outputs).toEqual({ version: '1.4.2', artifacts: ['a.tar', 'b.tar'] });
    const list = (await owner.get(`/api/project/${projectId}/tasks`)).json() as {
      id: number;
      outputs: unknown;
    }[];
    expect(list.find((t) => t.id === done.id)?.outputs).toEqual(answer.outputs);
  });

  it('reads NAME=value lines, skipping blank lines and comments', async () => {
    const { answer } = await run('lines.sh');
    expect(answer.outputs).toEqual({ VERSION: '2.0', CHANNEL: 'beta=1' });
  });

  it('keeps the outputs of a failed task too', async () => {
    const { done, answer } = await run('fail.sh');
    expect(done.status).toBe('error');
    expect(answer.outputs).toEqual({ partial: true });
  });

  it('answers {} for a task that wrote none, and its environment cannot move the file', async () => {
    const envId = await insertSecretEnvironment(
      h.deps,
      projectId,
      { json: {}, env: { SIGNALBOX_OUTPUTS: outside } },
      {},
    );
    const { done, answer, out } = await run('json.sh', envId);
    expect(done.status).toBe('success');
    expect(out).not.toContain(`outputs at ${outside}`);
    expect(answer.outputs).toEqual({ version: '1.4.2', artifacts: ['a.tar', 'b.tar'] });
    const none = await run('none.sh');
    expect(none.answer.outputs).toEqual({});
    expect(none.done.outputs).toBeNull();
  });

  it.each([
    [
      'link.sh',
      'a symbolic link',
      "The task's outputs were ignored: SIGNALBOX_OUTPUTS is a symbolic link, not a file",
    ],
    ['big.sh', 'a file over 64 KiB', "The task's outputs were ignored: the file is larger than 64 KiB"],
    ['dir.sh', 'a folder', "The task's outputs were ignored: SIGNALBOX_OUTPUTS is not a regular file"],
    [
      'bad.sh',
      'text that is no outputs',
      "The task's outputs were ignored: write a JSON object or NAME=value lines to SIGNALBOX_OUTPUTS",
    ],
    [
      'deep.sh',
      'JSON nested 5,000 deep',
      "The task's outputs were ignored: the JSON is nested deeper than 64 levels",
    ],
    [
      'array.sh',
      'a JSON array',
      "The task's outputs were ignored: write a JSON object or NAME=value lines to SIGNALBOX_OUTPUTS",
    ],
  ])('ignores %s (%s) with a line in the log', async (playbook, _what, line) => {
    const { done, answer, out } = await run(playbook);
    expect(done.status, out.join('\n')).toBe('success');
    expect(out).toContain(line);
    expect(answer.outputs).toEqual({});
    expect(done.outputs).toBeNull();
  });
});
