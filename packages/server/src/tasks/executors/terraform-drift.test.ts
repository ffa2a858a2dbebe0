import { globMatcher } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { changedPaths, driftRulesOf, judgeDrift } from './terraform-drift';
import { priorStateOf } from './terraform-plan';

const rc = (address: string, actions: string[], before: unknown, after: unknown) => ({
  address,
  change: { actions, before, after },
});

describe('drift judgement', () => {
  it('names the changed attribute paths, never values, bounded', () => {
    expect(
      changedPaths(
        { tags: { a: '1', b: '2' }, ingress: [{ port: 80 }, { port: 22 }], name: 'x', gone: 1 },
        { tags: { a: '1', b: '3', c: '4' }, ingress: [{ port: 80 }, { port: 2222 }], name: 'x' },
      ),
    ).toEqual(['gone', 'ingress[1].port', 'tags.b', 'tags.c']);
    expect(changedPaths({ list: [1] }, { list: [1, 2] })).toEqual(['list']);
    expect(changedPaths(1, 2)).toEqual(['(whole value)']);
    const wide = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i]));
    expect(changedPaths({}, wide)).toHaveLength(50);
  });

  it('matches address patterns (* any text, ? one character) and attribute path patterns (* one part)', () => {
    expect(globMatcher('aws_autoscaling_group.*').test('aws_autoscaling_group.web["a.b"]')).toBe(true);
    expect(globMatcher('module.?.x').test('module.a.x')).toBe(true);
    expect(globMatcher('aws_instance.web').test('aws_instance.web2')).toBe(false);
    expect(globMatcher('a(b)+[c]').test('a(b)+[c]')).toBe(true);
    expect(globMatcher('tags.*', 'part').test('tags.Owner')).toBe(true);
    expect(globMatcher('tags.*', 'part').test('tags.Owner.x')).toBe(false);
    expect(globMatcher('*', 'part').test('tags.web')).toBe(false);
    expect(globMatcher('a**b').test('ab')).toBe(true);
    expect(globMatcher('').test('')).toBe(true);
  });

  it('answers a pattern a regular expression would backtrack on for ever, as a plain walk', () => {
    // As a regular expression, ^.*a.*a…b$ against 250 "a"s backtracks through about 250^20 ways: it never ends.
    const pattern = `${'*a'.repeat(20)}*b`;
    const address = 'a'.repeat(250);
    expect(globMatcher(pattern).test(address)).toBe(false);
    expect(globMatcher(pattern, 'part').test(address)).toBe(false);
    expect(globMatcher(pattern).test(`${address}b`)).toBe(true);
  });

  it('keeps drift and changes the rules do not ignore; an attribute rule covers the paths inside it', () => {
    const refresh = {
      resource_drift: [
        rc(
          'aws_s3_bucket.logs',
          ['update'],
          { tags: { Owner: 'a', Scan: '1' } },
          { tags: { Owner: 'b', Scan: '2' } },
        ),
        rc('aws_sg.x', ['update'], { tags: { Scan: '1' } }, { tags: { Scan: '2' } }),
        rc('aws_asg.web', ['update'], { n: 1 }, { n: 2 }),
        rc('aws_instance.gone', ['delete'], { id: 'i' }, null),
        rc('data.x', ['read'], null, {}),
        { address: 42, change: {} },
        'junk',
      ],
    };
    const plan = {
      resource_changes: [
        rc('aws_instance.web', ['delete', 'create'], { ami: 'a' }, { ami: 'b' }),
        rc('aws_db.main', ['update'], { meta: { scan: 1 } }, { meta: { scan: 2 } }),
        rc('null_resource.same', ['no-op'], {}, {}),
      ],
    };
    const report = judgeDrift(refresh, plan, { addresses: ['aws_asg.*'], attributes: ['tags.Scan', 'meta'] });
    expect(report).toEqual({
      drifted: true,
      ignored: 3,
      omitted: 0,
      resources: [
        { address: 'aws_s3_bucket.logs', kind: 'drift', action: 'update', paths: ['tags.Owner'] },
        { address: 'aws_instance.gone', kind: 'drift', action: 'delete', paths: [] },
        { address: 'aws_instance.web', kind: 'change', action: 'replace', paths: ['ami'] },
      ],
    });
    expect(judgeDrift(null, null, { addresses: [], attributes: [] })).toEqual({
      drifted: false,
      ignored: 0,
      omitted: 0,
      resources: [],
    });
  });

  it('reads ignore rules and the prior state only from well-formed values', () => {
    expect(
      driftRulesOf({ drift_ignore_addresses: ['a', ' ', 3, ' b '], drift_ignore_attributes: 'x' }),
    ).toEqual({
      addresses: ['a', 'b'],
      attributes: [],
    });
    expect(priorStateOf({ prior_state: { serial: 7, lineage: 'abc' } })).toEqual({
      serial: 7,
      lineage: 'abc',
    });
    expect(priorStateOf({ prior_state: { serial: -1, lineage: 'x'.repeat(65) } })).toEqual({
      serial: null,
      lineage: null,
    });
    expect(priorStateOf({})).toEqual({ serial: null, lineage: null });
  });
});
