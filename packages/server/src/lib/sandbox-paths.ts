import { isAbsolute, resolve } from 'node:path';

/** A path confined tasks may see besides the system, at the same place: read-only unless `writable`. */
export type SandboxPath = { path: string; writable: boolean };

/**
 * Parses SIGNALBOX_TASK_SANDBOX_PATHS: absolute paths separated by commas, each optionally followed by `:rw`
 * (or `:ro`, the default). Answers the paths, or what is wrong with the text.
 */
export function parseSandboxPaths(text: string): SandboxPath[] | string {
  const out: SandboxPath[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const writable = entry.endsWith(':rw');
    const path = (writable || entry.endsWith(':ro') ? entry.slice(0, -3) : entry).replace(/\/+$/, '') || '/';
    if (!isAbsolute(path)) return `${JSON.stringify(entry)} is not an absolute path`;
    if (path === '/') return 'the whole file system cannot be shared with tasks';
    if (/\p{Cc}/u.test(path)) return `${JSON.stringify(entry)} holds a control character`;
    out.push({ path: resolve(path), writable });
  }
  return out;
}
