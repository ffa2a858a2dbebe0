// Stack traces of the built server point into its TypeScript sources, as `node --enable-source-maps` makes them,
// but a bundle's source map is read only when a stack trace names that bundle. With source maps on from the start,
// Node reads and keeps the map of every module it loads, ours and the npm packages' (≈ 4 MB of an idle server's
// memory), for stack traces that a healthy server rarely prints.
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Maps the frames of stack traces that fall in the JavaScript files under `dir` (each `x.js` beside its `x.js.map`)
 * to their sources. Frames elsewhere are written as V8 writes them. Answers a function that puts back the stack
 * formatting there was before.
 */
export function mapStackTraces(dir) {
  const prefix = pathToFileURL(dir).href.replace(/\/?$/, '/');
  /** @type {Map<string, SourceMap | null>} by the URL of the bundle; null: it has no readable map. */
  const maps = new Map();
  const mapOf = (url) => {
    if (!maps.has(url)) {
      let map = null;
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')));
      } catch {
        // No map, or not one Node reads: the frame stays as it is.
      }
      maps.set(url, map);
    }
    return maps.get(url);
  };
  const frame = (site) => {
    const text = String(site);
    const url = site.getFileName();
    const line = site.getLineNumber();
    const column = site.getColumnNumber();
    if (!url?.startsWith(prefix) || !line || !column) return text;
    const entry = mapOf(url)?.findEntry(line - 1, column - 1);
    if (!entry?.originalSource) return text;
    const source = fileURLToPath(new URL(entry.originalSource, url));
    return text.replace(
      `${url}:${line}:${column}`,
      `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}`,
    );
  };
  const before = Error.prepareStackTrace;
  Error.prepareStackTrace = (error, sites) => {
    let head;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = '<error>';
    }
    return head + sites.map((site) => `\n    at ${frame(site)}`).join('');
  };
  return () => {
    Error.prepareStackTrace = before;
  };
}
