import { STATE_DIFF_ATTRIBUTES_MAX, STATE_DIFF_VALUE_MAX } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { diffStates } from './state-diff';

type Instance = {
  index_key?: string | number;
  attributes: Record<string, unknown>;
  sensitive_attributes?: unknown[];
};
const state = (
  resources: { module?: string; mode?: string; type: string; name: string; instances: Instance[] }[],
) => ({
  version: 4,
  resources: resources.map((r) => ({ mode: 'managed', ...r })),
});
const diff = (a: unknown, b: unknown) =>
  diffStates({ id: 1, serial: 1, state: a }, { id: 2, serial: 2, state: b });
const attr = (value: string) => ({ type: 'get_attr', value });

describe('the diff of two Terraform states', () => {
  it('names instances by module, data mode and index key, as Terraform addresses them', () => {
    const before = state([
      { type: 'aws_instance', name: 'web', instances: [{ index_key: 0, attributes: {} }] },
    ]);
    const after = state([
      {
        type: 'aws_instance',
        name: 'web',
        instances: [
          { index_key: 0, attributes: {} },
          { index_key: 1, attributes: {} },
        ],
      },
      {
        module: 'module.net',
        type: 'aws_subnet',
        name: 'a',
        instances: [{ index_key: 'eu-1', attributes: {} }],
      },
      { mode: 'data', type: 'aws_ami', name: 'latest', instances: [{ attributes: {} }] },
    ]);
    expect(diff(before, after).added).toEqual([
      'aws_instance.web[1]',
      'module.net.aws_subnet.a["eu-1"]',
      'data.aws_ami.latest',
    ]);
    expect(diff(after, before).removed).toHaveLength(3);
  });

  it('lists changed attribute paths, nested and in lists, hiding what Terraform marks sensitive', () => {
    const instance = (password: string, tags: Record<string, string>, rules: unknown[]) => ({
      attributes: { password, tags, rules, same: 1, creds: { token: password } },
      sensitive_attributes: [[attr('password')], [attr('creds'), attr('token')]],
    });
    const a = state([
      { type: 'x', name: 'y', instances: [instance('old-secret', { env: 'dev' }, [{ port: 80 }])] },
    ]);
    const b = state([
      {
        type: 'x',
        name: 'y',
        instances: [instance('new-secret', { env: 'prod', team: 'a' }, [{ port: 443 }])],
      },
    ]);
    const result = diff(a, b);
    expect(result.changed).toEqual([
      {
        address: 'x.y',
        attributes: [
          { path: 'creds.token', before: null, after: null, sensitive: true },
          { path: 'password', before: null, after: null, sensitive: true },
          { path: 'rules[0].port', before: '80', after: '443', sensitive: false },
          { path: 'tags.env', before: '"dev"', after: '"prod"', sensitive: false },
          { path: 'tags.team', before: null, after: '"a"', sensitive: false },
        ],
      },
    ]);
    expect(JSON.stringify(result)).not.toContain('secret');
  });

  it('cuts long values and long lists, saying so; ignores what is not a state', () => {
    const many = Object.fromEntries(
      Array.from({ length: STATE_DIFF_ATTRIBUTES_MAX + 5 }, (_, i) => [`a${i}`, i]),
    );
    const a = state([{ type: 'x', name: 'y', instances: [{ attributes: { _long: 'a', ...many } }] }]);
    const b = state([
      {
        type: 'x',
        name: 'y',
        instances: [
          {
            attributes: {
              _long: 'b'.repeat(STATE_DIFF_VALUE_MAX * 2),
              ...Object.fromEntries(Object.keys(many).map((k) => [k, -1])),
            },
          },
        ],
      },
    ]);
    const result = diff(a, b);
    expect(result.truncated).toBe(true);
    expect(result.changed[0]?.attributes).toHaveLength(STATE_DIFF_ATTRIBUTES_MAX);
    const long = result.changed[0]?.attributes.find((c) => c.path === '_long');
    expect(long?.after?.length).toBe(STATE_DIFF_VALUE_MAX + 1);
    expect(diff(null, { resources: 'nope' })).toMatchObject({
      added: [],
      removed: [],
      changed: [],
      truncated: false,
    });
  });
});
