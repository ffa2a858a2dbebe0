import { afterEach, describe, expect, it, vi } from 'vitest';
import { findMatches, LogStore, stripAnsi } from './log-store';

/**
 * The output route as the server answers it: lines after the id `after` (line i has id 2i + 1, so ids have gaps),
 * at most `limit` and at most `maxPage` per page, and a next-page link while lines follow.
 */
function serve(lines: string[], maxPage = Number.POSITIVE_INFINITY) {
  const fetchMock = vi.fn(async (url: string) => {
    const u = new URL(url, 'http://localhost');
    const after = Number(u.searchParams.get('after'));
    const limit = Number(u.searchParams.get('limit'));
    if (u.searchParams.has('offset') || limit > 10_000)
      return new Response(JSON.stringify({ error: 'bad page' }), { status: 400 });
    const start = lines.findIndex((_, i) => 2 * i + 1 > after);
    const from = start < 0 ? lines.length : start;
    const rows = lines
      .slice(from, from + Math.min(limit, maxPage))
      .map((output, i) => ({ id: 2 * (from + i) + 1, task_id: 2, output, time: '' }));
    const last = rows.at(-1);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (last && from + rows.length < lines.length)
      headers.link = `</api/project/1/tasks/2/output?after=${last.id}&limit=${limit}>; rel="next"`;
    return new Response(JSON.stringify(rows), { status: 200, headers });
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

afterEach(() => vi.unstubAllGlobals());

describe('LogStore', () => {
  it('reads stored lines page by page', async () => {
    const lines = Array.from({ length: 25000 }, (_, i) => `line ${i}`);
    serve(lines);
    const store = new LogStore(1, 2, () => {});
    await store.sync();
    expect(store.count).toBe(25000);
    expect(store.line(24999)).toBe('line 24999');
  });

  it('follows the next-page link when a page is shorter than asked, and stops without one', async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `long line ${i}`);
    const fetchMock = serve(lines, 7);
    const store = new LogStore(1, 2, () => {});
    await store.sync();
    expect(Array.from({ length: store.count }, (_, i) => store.line(i))).toEqual(lines);
    expect(fetchMock).toHaveBeenCalledTimes(Math.ceil(1000 / 7));
  });

  it('drops live lines once they are stored, and resyncs what was missed', async () => {
    const lines = ['a', 'b'];
    serve(lines);
    const store = new LogStore(1, 2, () => {});
    await store.sync();
    store.addLive('c');
    expect(store.count).toBe(3);
    // 'd' and 'e' were missed while the socket was down; all three are stored now.
    lines.push('c', 'd', 'e');
    await store.sync();
    expect(Array.from({ length: store.count }, (_, i) => store.line(i))).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('finds matches ignoring ANSI codes', () => {
    const store = { count: 3, line: (i: number) => ['\x1b[32mok\x1b[0m', 'fail', 'OK again'][i] };
    expect(findMatches(store, 'ok')).toEqual([0, 2]);
    expect(stripAnsi('\x1b[1;31mred\x1b[0m')).toBe('red');
  });
});
