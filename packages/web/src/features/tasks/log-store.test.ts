import { afterEach, describe, expect, it, vi } from 'vitest';
import { findMatches, isErrorLine, LogStore, stripAnsi } from './log-store';

/**
 * The output route as the server answers it: lines from the 0-based `offset` (line i has id 2i + 1, so ids have
 * gaps, and `line` i + 1), at most `limit` and at most `maxPage` per page, and a next-page link while lines follow.
 */
function serve(lines: string[], maxPage = Number.POSITIVE_INFINITY) {
  const fetchMock = vi.fn(async (url: string) => {
    const u = new URL(url, 'http://localhost');
    const from = Number(u.searchParams.get('offset'));
    const limit = Number(u.searchParams.get('limit'));
    if (u.searchParams.has('after') || limit > 10_000)
      return new Response(JSON.stringify({ error: 'bad page' }), { status: 400 });
    const rows = lines.slice(from, from + Math.min(limit, maxPage)).map((output, i) => ({
      id: 2 * (from + i) + 1,
      task_id: 2,
      output,
      time: `t${from + i}`,
      line: from + i + 1,
    }));
    const last = rows.at(-1);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (last && from + rows.length < lines.length)
      headers.link = `</api/project/1/tasks/2/output?after=${last.id}&limit=${limit}>; rel="next"`;
    return new Response(JSON.stringify(rows), { status: 200, headers });
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

const all = (store: LogStore) => Array.from({ length: store.count }, (_, i) => store.line(i));

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

  it('reads on when opened again while a page closed over is on its way (a view mounted anew)', async () => {
    serve(['a', 'b', 'c']);
    const store = new LogStore(1, 2, () => {});
    const first = store.sync();
    store.close();
    store.open();
    await store.sync();
    await first;
    expect(all(store)).toEqual(['a', 'b', 'c']);
  });

  it('follows the next-page link when a page is shorter than asked, and stops without one', async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `long line ${i}`);
    const fetchMock = serve(lines, 7);
    const store = new LogStore(1, 2, () => {});
    await store.sync();
    expect(all(store)).toEqual(lines);
    expect(fetchMock).toHaveBeenCalledTimes(Math.ceil(1000 / 7));
  });

  it('keeps each line once by its position, whatever the order of live lines and pages', async () => {
    const lines = ['a', 'b'];
    serve(lines);
    const store = new LogStore(1, 2, () => {});
    await store.sync();
    // Lines 3 and 4 are stored; a page read them before their live messages came.
    lines.push('c', 'd');
    await store.sync();
    store.addLive(3, 'c', 't2');
    store.addLive(4, 'd', 't3');
    expect(all(store)).toEqual(['a', 'b', 'c', 'd']);
    // Line 5 comes live; 6 and 7 were missed while the socket was down, 8 arrives past the gap and waits for it.
    lines.push('e', 'f', 'g', 'h');
    store.addLive(5, 'e', 't4');
    expect(store.count).toBe(5);
    store.addLive(8, 'h', 't7');
    expect(store.count).toBe(5);
    await vi.waitFor(() => expect(all(store)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']));
    store.addLive(6, 'f', 't5');
    expect(store.count).toBe(8);
    expect(store.time(7)).toBe('t7');
  });

  it('takes batches of live lines by position and reads the gap a skipped batch left', async () => {
    const lines = ['a', 'b'];
    const fetchMock = serve(lines);
    let changes = 0;
    const store = new LogStore(1, 2, () => {
      changes += 1;
    });
    await store.sync();
    const pagesBefore = fetchMock.mock.calls.length;
    changes = 0;
    // One message, one change for the view; a line already held is not taken twice.
    lines.push('c', 'd', 'e');
    store.addLiveLines(2, ['b', 'c', 'd', 'e'], ['t1', 't2', 't3', 't4']);
    expect(all(store)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(changes).toBe(1);
    expect(store.time(4)).toBe('t4');
    expect(fetchMock.mock.calls.length).toBe(pagesBefore);
    // The server skipped lines 6-8 while the console was behind: 9-10 wait, the gap is read as a page.
    lines.push('f', 'g', 'h', 'i', 'j');
    store.addLiveLines(9, ['i', 'j'], ['t8', 't9']);
    expect(store.count).toBe(5);
    await vi.waitFor(() => expect(all(store)).toEqual([...'abcdefghij']));
    expect(fetchMock.mock.calls.length).toBeGreaterThan(pagesBefore);
    // A batch without a position (the server could not tell it) reads the log rather than guessing.
    lines.push('k');
    store.addLiveLines(undefined, ['k'], ['t10']);
    await vi.waitFor(() => expect(store.count).toBe(11));
  });

  it('finds the lines that report a failure as they arrive', async () => {
    serve([
      'ok',
      'fatal: [web1]: FAILED! => {}',
      'PLAY RECAP',
      'web1 : ok=1 changed=0 unreachable=0 failed=1',
    ]);
    const store = new LogStore(1, 2, () => {});
    await store.sync();
    store.addLive(5, '\x1b[31m│ Error: Invalid reference\x1b[0m', '');
    store.addLive(6, 'web2 : ok=3 changed=0 unreachable=0 failed=0', '');
    expect(store.errors).toEqual([1, 3, 4]);
    expect(store.firstError).toBe(1);
    expect(
      ['ERROR! no playbook', 'Traceback (most recent call last):', 'error: pathspec'].every(isErrorLine),
    ).toBe(true);
    expect(['no errors found', 'failed=0', 'ok: [web1]'].some(isErrorLine)).toBe(false);
  });

  it('counts a program that could not be started as an error line', () => {
    expect(
      [
        'Cannot run tofu: spawn tofu ENOENT',
        'sh: 1: exec: tofu: not found',
        '/bin/sh: line 1: tofu: command not found',
        'bwrap: execvp tofu: No such file or directory',
        '\x1b[31mspawn /opt/bin/pulumi EACCES\x1b[0m',
      ].every(isErrorLine),
    ).toBe(true);
    expect(['tofu init', 'found 3 hosts', 'exec: done'].some(isErrorLine)).toBe(false);
  });

  it('finds matches ignoring ANSI codes', () => {
    const store = { count: 3, line: (i: number) => ['\x1b[32mok\x1b[0m', 'fail', 'OK again'][i] };
    expect(findMatches(store, 'ok')).toEqual([0, 2]);
    expect(stripAnsi('\x1b[1;31mred\x1b[0m')).toBe('red');
  });
});
