import { afterEach, describe, expect, it, vi } from 'vitest';
import { findMatches, LogStore, stripAnsi } from './log-store';

function serve(lines: string[]) {
  const fetchMock = vi.fn(async (url: string) => {
    const u = new URL(url, 'http://localhost');
    const offset = Number(u.searchParams.get('offset'));
    const limit = Number(u.searchParams.get('limit'));
    const rows = lines
      .slice(offset, offset + limit)
      .map((output, i) => ({ id: offset + i + 1, output, time: '' }));
    return new Response(JSON.stringify(rows), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
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
