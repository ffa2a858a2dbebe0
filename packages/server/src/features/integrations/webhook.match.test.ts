import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { safeEqual } from '../../lib/crypto';
import { asText, deliveryId, extract, jsonPath, matches, verifyAuth, WebhookRequest } from './webhook.match';

const body = {
  ref: 'refs/heads/main',
  repository: { full_name: 'acme/app', stars: 3, ratio: 1.5, private: false },
  commits: [{ id: 'abc123', message: 'Fix it' }, { id: 'def456' }],
  count: 2.0,
};
const request = (headers: Record<string, string> = {}, raw: string = JSON.stringify(body)) =>
  new WebhookRequest(headers, Buffer.from(raw));

describe('jsonPath', () => {
  it('follows dotted paths, array indexes and bracket indexes', () => {
    expect(jsonPath(body, 'repository.full_name')).toBe('acme/app');
    expect(jsonPath(body, 'commits.0.id')).toBe('abc123');
    expect(jsonPath(body, 'commits.[1].id')).toBe('def456');
    expect(jsonPath(body, 'commits[1].id')).toBe('def456');
    expect(jsonPath(body, 'commits.5.id')).toBeUndefined();
    expect(jsonPath(body, 'commits.x')).toBeUndefined();
    expect(jsonPath(body, 'missing.deeper')).toBeUndefined();
  });

  it('never follows inherited properties', () => {
    expect(jsonPath(body, '__proto__')).toBeUndefined();
    expect(jsonPath(body, 'repository.constructor')).toBeUndefined();
    expect(jsonPath(body, 'ref.length')).toBeUndefined();
  });
});

describe('asText', () => {
  it('compares whole-number floats as integers and keeps other values readable', () => {
    expect(asText(2.0)).toBe('2');
    expect(asText(1.5)).toBe('1.5');
    expect(asText(false)).toBe('false');
    expect(asText({ a: 1 })).toBe('{"a":1}');
    expect(asText(null)).toBeUndefined();
  });
});

describe('matches', () => {
  const rule = (r: Partial<Parameters<typeof matches>[1]>) => ({
    match_type: 'body',
    body_data_type: 'json',
    key: 'repository.full_name',
    method: 'equals',
    value: 'acme/app',
    ...r,
  });

  it('equals, unequals and contains on a JSON body', () => {
    expect(matches(request(), rule({}))).toBe(true);
    expect(matches(request(), rule({ value: 'acme/other' }))).toBe(false);
    expect(matches(request(), rule({ method: 'unequals', value: 'acme/other' }))).toBe(true);
    expect(matches(request(), rule({ method: 'unequals' }))).toBe(false);
    expect(matches(request(), rule({ method: 'contains', value: 'acme/' }))).toBe(true);
    expect(matches(request(), rule({ method: 'contains', value: 'zzz' }))).toBe(false);
    expect(matches(request(), rule({ key: 'count', value: '2' }))).toBe(true);
    expect(matches(request(), rule({ key: 'repository.private', value: 'false' }))).toBe(true);
  });

  it('an absent value equals nothing and differs from everything', () => {
    expect(matches(request(), rule({ key: 'nope' }))).toBe(false);
    expect(matches(request(), rule({ key: 'nope', method: 'contains' }))).toBe(false);
    expect(matches(request(), rule({ key: 'nope', method: 'unequals' }))).toBe(true);
    expect(matches(request({}, 'not json'), rule({}))).toBe(false);
    expect(matches(request({}, ''), rule({}))).toBe(false);
  });

  it('matches headers case-insensitively by name and the whole body as a string', () => {
    const r = request({ 'x-github-event': 'push' });
    expect(matches(r, rule({ match_type: 'header', key: 'X-GitHub-Event', value: 'push' }))).toBe(true);
    expect(matches(r, rule({ match_type: 'header', key: 'X-Other', value: 'push' }))).toBe(false);
    expect(
      matches(
        request({}, 'hello world'),
        rule({ body_data_type: 'string', method: 'contains', value: 'lo w' }),
      ),
    ).toBe(true);
  });

  it('refuses an unknown method', () => {
    expect(matches(request(), rule({ method: 'regex' }))).toBe(false);
  });
});

describe('extract', () => {
  it('puts environment values in the environment and task values in params, keeping JSON types', () => {
    const out = extract(request({ 'x-github-event': 'push' }), [
      {
        value_source: 'body',
        body_data_type: 'json',
        key: 'ref',
        variable: 'REF',
        variable_type: 'environment',
      },
      {
        value_source: 'body',
        body_data_type: 'json',
        key: 'repository.stars',
        variable: 'STARS',
        variable_type: '',
      },
      {
        value_source: 'header',
        body_data_type: 'json',
        key: 'X-GitHub-Event',
        variable: 'event',
        variable_type: 'task',
      },
      {
        value_source: 'body',
        body_data_type: 'json',
        key: 'nope',
        variable: 'NOPE',
        variable_type: 'environment',
      },
      {
        value_source: 'body',
        body_data_type: 'string',
        key: 'x',
        variable: 'RAW',
        variable_type: 'environment',
      },
    ]);
    expect(out.environment).toEqual({ REF: 'refs/heads/main', STARS: 3, RAW: JSON.stringify(body) });
    expect(out.params).toEqual({ event: 'push' });
  });
});

describe('verifyAuth', () => {
  const raw = '{"a":1}';
  const sig = createHmac('sha256', 's3cret').update(raw).digest('hex');

  it('accepts no method without a secret', () => {
    expect(verifyAuth(request({}, raw), { auth_method: '', auth_header: '' }, undefined)).toBe(true);
  });

  it('github: sha256=<hex> in X-Hub-Signature-256', () => {
    const rule = { auth_method: 'github', auth_header: '' };
    expect(verifyAuth(request({ 'x-hub-signature-256': `sha256=${sig}` }, raw), rule, 's3cret')).toBe(true);
    expect(
      verifyAuth(request({ 'x-hub-signature-256': `sha256=${sig.toUpperCase()}` }, raw), rule, 's3cret'),
    ).toBe(true);
    expect(verifyAuth(request({ 'x-hub-signature-256': sig }, raw), rule, 's3cret')).toBe(false);
    expect(verifyAuth(request({ 'x-hub-signature-256': `sha256=${sig}` }, `${raw} `), rule, 's3cret')).toBe(
      false,
    );
    expect(verifyAuth(request({ 'x-hub-signature-256': `sha256=${sig}` }, raw), rule, 'other')).toBe(false);
    expect(verifyAuth(request({}, raw), rule, 's3cret')).toBe(false);
    expect(verifyAuth(request({ 'x-hub-signature-256': `sha256=${sig}` }, raw), rule, undefined)).toBe(false);
    expect(verifyAuth(request({ 'x-hub-signature-256': `sha256=${sig}` }, raw), rule, '')).toBe(false);
  });

  it('hmac: hex in the configured header', () => {
    const rule = { auth_method: 'hmac', auth_header: 'X-Signature' };
    expect(verifyAuth(request({ 'x-signature': sig }, raw), rule, 's3cret')).toBe(true);
    expect(verifyAuth(request({ 'x-signature': sig.slice(1) }, raw), rule, 's3cret')).toBe(false);
    expect(verifyAuth(request({ 'x-other': sig }, raw), rule, 's3cret')).toBe(false);
  });

  it('token: the configured header equals the secret', () => {
    const rule = { auth_method: 'token', auth_header: 'X-Token' };
    expect(verifyAuth(request({ 'x-token': 's3cret' }, raw), rule, 's3cret')).toBe(true);
    expect(verifyAuth(request({ 'x-token': 's3cre' }, raw), rule, 's3cret')).toBe(false);
    expect(verifyAuth(request({ 'x-token': 's3cret ' }, raw), rule, 's3cret')).toBe(false);
    expect(verifyAuth(request({}, raw), rule, 's3cret')).toBe(false);
  });

  it('refuses an unknown method', () => {
    expect(verifyAuth(request({}, raw), { auth_method: 'basic', auth_header: '' }, 's3cret')).toBe(false);
  });

  it('safeEqual compares exactly', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('deliveryId', () => {
  it('takes the first delivery header present: GitHub, GitLab, Gitea, then X-Request-Id', () => {
    const all = {
      'x-github-delivery': 'gh-1',
      'x-gitlab-event-uuid': 'gl-1',
      'x-gitea-delivery': 'gt-1',
      'x-request-id': 'rq-1',
    };
    expect(deliveryId(request(all))).toBe('gh-1');
    const { 'x-github-delivery': _gh, ...noGithub } = all;
    expect(deliveryId(request(noGithub))).toBe('gl-1');
    const { 'x-gitlab-event-uuid': _gl, ...giteaOn } = noGithub;
    expect(deliveryId(request(giteaOn))).toBe('gt-1');
    expect(deliveryId(request({ 'x-request-id': 'rq-1' }))).toBe('rq-1');
    expect(deliveryId(request({ 'x-github-event': 'push' }))).toBeUndefined();
  });

  it('skips blank headers and trims the value', () => {
    expect(deliveryId(request({ 'x-github-delivery': '   ', 'x-request-id': ' rq-2 ' }))).toBe('rq-2');
    expect(deliveryId(request({ 'x-github-delivery': '' }))).toBeUndefined();
  });

  it('keeps long or non-ASCII ids bounded as their SHA-256, distinct per id', () => {
    const long = deliveryId(request({ 'x-request-id': 'a'.repeat(5000) }));
    expect(long).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(deliveryId(request({ 'x-request-id': `${'a'.repeat(4999)}b` }))).not.toBe(long);
    expect(deliveryId(request({ 'x-request-id': 'id with spaces' }))).toMatch(/^sha256:[0-9a-f]{64}$/);
    // Case matters: two ids differing only in case are two deliveries.
    expect(deliveryId(request({ 'x-request-id': 'ABC' }))).not.toBe(
      deliveryId(request({ 'x-request-id': 'abc' })),
    );
    expect(deliveryId(request({ 'x-github-delivery': 'a'.repeat(200) }))).toBe('a'.repeat(200));
  });
});
