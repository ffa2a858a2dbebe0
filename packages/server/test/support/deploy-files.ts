import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, where `docker build -f deploy/Dockerfile .` takes its context. */
export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

export const readRepoFile = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

export interface Instruction {
  keyword: string;
  /** The arguments, continuation lines joined. */
  args: string;
  /** The stage's name (`AS name`), or its index when unnamed. */
  stage: string;
}

/** Dockerfile instructions in order: comments dropped, `\`-continued lines joined. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let stage = '';
  let stages = 0;
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    if (!pending && !line.trim()) continue;
    pending += line.replace(/\\\s*$/, ' ');
    if (/\\\s*$/.test(line)) continue;
    const [, keyword = '', args = ''] = /^\s*(\S+)\s*(.*)$/s.exec(pending) ?? [];
    pending = '';
    const upper = keyword.toUpperCase();
    if (upper === 'FROM') stage = /\bAS\s+(\S+)\s*$/i.exec(args)?.[1] ?? String(stages);
    if (upper === 'FROM') stages += 1;
    instructions.push({ keyword: upper, args: args.replace(/\s+/g, ' ').trim(), stage });
  }
  return instructions;
}

/** A COPY's options (`--from=build`), sources and destination; JSON-array form included. */
export function copyParts(args: string): { from?: string; sources: string[]; dest: string } {
  const words = args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(' ');
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
  const paths = words.filter((w) => !w.startsWith('--'));
  return { from, sources: paths.slice(0, -1), dest: paths.at(-1) ?? '' };
}

/** Whether a context path is left out by a .dockerignore holding `**\/name` and plain path patterns only. */
export function isDockerIgnored(ignoreFile: string, path: string): boolean {
  const segments = path.replace(/^\.\/|\/$/g, '').split('/');
  return ignoreFile
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .some((pattern) => {
      if (pattern.startsWith('**/')) return segments.includes(pattern.slice(3));
      const parts = pattern.split('/');
      return parts.every(
        (part, i) => part === segments[i] || (part.startsWith('*') && segments[i]?.endsWith(part.slice(1))),
      );
    });
}
