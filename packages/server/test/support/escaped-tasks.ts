import type { Deps } from '../../src/deps';
import { escapeRepo, uniqueSleep } from './escapes';
import { insertRepository, insertTemplate, waitFor } from './task-fixtures';

/** The steps of the escaped-grandchild tests (see escapes.ts) that run a task of the escape repository. */

type Rows = Pick<Deps, 'db' | 'dialect'>;

/** Inserts a repository of a new escape repository (as a file:// URL); its id. */
export const insertEscapeRepository = (deps: Rows, projectId: number) =>
  insertRepository(deps, projectId, { git_url: `file://${escapeRepo()}` });

/**
 * Inserts a template running `script` of the escape repository `repositoryId` in isolation `mode`, for a new sleep
 * number (also added to `numbers`, for killSleepers); the template's id and the number.
 */
export async function insertEscapeTemplate(
  deps: Rows,
  projectId: number,
  repositoryId: number,
  { script, mode, numbers }: { script: string; mode: string; numbers: number[] },
) {
  const n = uniqueSleep();
  numbers.push(n);
  const templateId = await insertTemplate(deps, projectId, {
    repository_id: repositoryId,
    playbook: script,
    arguments: JSON.stringify([String(n), mode]),
  });
  return { templateId, n };
}

/** Waits until a task's output (`output` reads it) names the escaped sleep and says it was recorded; its pid. */
export const escapedPid = (output: () => Promise<string[]>) =>
  waitFor(async () => {
    const out = await output();
    const line = out.find((l) => l.startsWith('escaped '));
    return line && out.includes('recorded') ? Number(line.split(' ')[1]) : undefined;
  }, 20_000);
