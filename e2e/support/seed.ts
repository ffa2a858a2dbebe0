import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Api } from './api';

/** A local git repository holding the given files (by path inside it). */
export function scriptsRepo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'signalbox-e2e-repo-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', 'commit', '-q', '-m', 'scripts');
  return dir;
}

/**
 * A project with a None key, a local repository of bash scripts, an empty environment and one template per
 * script: `scripts` maps a template name to its script's file name and text; `otherFiles` are committed too.
 */
export async function seedBashProject(
  admin: Api,
  name: string,
  scripts: Record<string, readonly [file: string, text: string]>,
  otherFiles: Record<string, string> = {},
) {
  const projectId = (await admin.post<{ id: number }>('/projects', { name })).id;
  const base = `/project/${projectId}`;
  // Every project starts with its None key and Empty environment (names are unique in a project): use those.
  const keys = await admin.get<{ id: number; name: string }[]>(`${base}/keys`);
  const key = keys.find((k) => k.name === 'None')!;
  const repo = await admin.post<{ id: number }>(`${base}/repositories`, {
    name: 'scripts',
    git_url: scriptsRepo({
      ...Object.fromEntries(Object.entries(scripts).map(([, [file, text]]) => [file, text])),
      ...otherFiles,
    }),
    git_branch: '',
    ssh_key_id: key.id,
    project_id: projectId,
  });
  const environments = await admin.get<{ id: number; name: string }[]>(`${base}/environment`);
  const env = environments.find((e) => e.name === 'Empty')!;
  const templates: Record<string, number> = {};
  for (const [title, [file]] of Object.entries(scripts)) {
    const tpl = await admin.post<{ id: number }>(`${base}/templates`, {
      name: title,
      app: 'bash',
      playbook: file,
      repository_id: repo.id,
      environment_id: env.id,
      project_id: projectId,
    });
    templates[title] = tpl.id;
  }
  return { projectId, templates, repositoryId: repo.id, environmentId: env.id };
}

export async function waitForStatus(
  api: Api,
  projectId: number,
  taskId: number,
  statuses: string[],
  timeout = 60_000,
) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const task = await api.get<{ status: string }>(`/project/${projectId}/tasks/${taskId}`);
    if (statuses.includes(task.status)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${task.status}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
