import type { FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import { linkNextPage } from './next-page';

/** The Link header linkNextPage sets for a request target. */
function linkOf(url: string, before: number, limit: number): string {
  let link = '';
  const reply = {
    header(name: string, value: string) {
      expect(name).toBe('link');
      link = value;
      return reply;
    },
  };
  linkNextPage(url, reply as unknown as FastifyReply, before, limit);
  return link;
}

describe('the next page of a keyset-paged list', () => {
  it('keeps the query, drops the offset and sets before and limit where they were', () => {
    expect(linkOf('/api/project/1/tasks?limit=4', 90, 4)).toBe(
      '</api/project/1/tasks?limit=4&before=90>; rel="next"',
    );
    expect(linkOf('/api/project/1/tasks', 90, 200)).toBe(
      '</api/project/1/tasks?before=90&limit=200>; rel="next"',
    );
    expect(linkOf('/api/project/1/tasks?offset=400&status=error&before=900&limit=50&cold=7', 850, 50)).toBe(
      '</api/project/1/tasks?status=error&before=850&limit=50&cold=7>; rel="next"',
    );
  });

  it('drops repeated and encoded names of the parameters it sets', () => {
    expect(linkOf('/e?before=1&%62efore=2&limit=3&limit=9&off%73et=5&a=1', 40, 3)).toBe(
      '</e?before=40&limit=3&a=1>; rel="next"',
    );
  });

  it('keeps other parameters byte for byte, and undecodable ones too', () => {
    expect(linkOf('/e?user=a%20b&q=%E2%9C%93&bad=%ZZ&&', 4, 10)).toBe(
      '</e?user=a%20b&q=%E2%9C%93&bad=%ZZ&before=4&limit=10>; rel="next"',
    );
  });

  it('encodes what would end the target or the header value', () => {
    const link = linkOf('/e?x=a>b"c<d e', 4, 10);
    expect(link).toBe('</e?x=a%3Eb%22c%3Cd%20e&before=4&limit=10>; rel="next"');
    expect(link.match(/[<>]/g)).toEqual(['<', '>']);
  });
});
