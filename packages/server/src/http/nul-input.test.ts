import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { testDialects } from '../../test/support/dialects';
import { type Client, createHarness, type Harness } from '../../test/support/harness';
import { AppError, parse } from '../lib/errors';

/**
 * U+0000 in any input is refused with a 400 naming the field before it reaches a database (PostgreSQL fails the
 * whole query on it); other control characters are ordinary text that is stored and read back.
 */

/** The answer naming `field` (its key) in its wording `label`. */
const nul = (field: string, label = field.charAt(0).toUpperCase() + field.slice(1)) => ({
  error: `${label} must not contain NUL characters`,
  code: 'no_nul',
  fields: { [field]: `${label} must not contain NUL characters` },
});

describe.each(testDialects())('NUL characters on $name', (dialect) => {
  let h: Harness;
  let admin: Client;
  let projectId: number;

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true, can_create_project: true });
    projectId = (await admin.post('/api/projects', { name: 'P' })).json().id;
  });
  afterAll(async () => h?.close());

  it('refuses a NUL in the sign-in name before anyone is signed in', async () => {
    const res = await h.anonymous().request('POST', '/api/auth/login', '{"auth":"a\\u0000b","password":"x"}');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject(nul('auth', 'Username'));
  });

  it('refuses a NUL in a path parameter', async () => {
    const res = await admin.request('DELETE', '/api/user/tokens/%00');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject(nul('id', 'ID'));
    const project = await admin.get('/api/project/1%00');
    expect(project.statusCode).toBe(400);
    expect(project.json()).toMatchObject(nul('project_id', 'Project ID'));
  });

  it('refuses a NUL in the query string', async () => {
    const res = await admin.get(`/api/project/${projectId}/keys?sort=name&order=a%00`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject(nul('order'));
  });

  it('refuses a NUL at any depth of a body, naming the path; in a key it is shown as \\0', async () => {
    const nested = await admin.post(`/api/project/${projectId}/templates`, {
      name: 't',
      survey_vars: [{ name: 'ok' }, { name: 'v', values: [{ name: 'x', value: 'a\u0000' }] }],
    });
    expect(nested.statusCode).toBe(400);
    expect(nested.json()).toMatchObject(nul('survey_vars.1.values.0.value', 'Value'));
    const key = await admin.post('/api/projects', { 'na\u0000me': 'x' });
    expect(key.statusCode).toBe(400);
    expect(key.json().error).toBe('na\\0me must not contain NUL characters');
    expect(key.body).not.toContain('\\u0000');
    const bare = await admin.request('POST', '/api/projects', '"\\u0000"');
    expect(bare.statusCode).toBe(400);
    expect(bare.json().error).toBe('Request body must not contain NUL characters');
    expect((await admin.get('/api/projects')).json()).toHaveLength(1);
  });

  it('stores and returns other control characters unchanged, and signs in no one with them', async () => {
    const name = 'a\u0001\u0007\b\u000b\u000c\u001b[0m\u001f\u007f\u0085\u2028z';
    const created = await admin.post('/api/projects', { name });
    expect(created.statusCode, created.body).toBe(201);
    expect((await admin.get(`/api/project/${created.json().id}`)).json().name).toBe(name);
    const login = await h.anonymous().request('POST', '/api/auth/login', { auth: name, password: name });
    expect(login.statusCode).toBe(401);
  });
});

describe('parse()', () => {
  it('refuses a NUL before the schema sees the input', () => {
    const schema = z.object({ name: z.string(), tags: z.array(z.string()) });
    expect(() => parse(schema, { name: 'ok', tags: ['a', 'b\u0000'] })).toThrow(
      expect.objectContaining({
        statusCode: 400,
        message: 'Tags must not contain NUL characters',
        fields: { 'tags.1': 'Tags must not contain NUL characters' },
      }),
    );
    expect(() => parse(z.string(), 'a\u0000')).toThrow(AppError);
    expect(parse(schema, { name: 'a\u0001', tags: [] })).toEqual({ name: 'a\u0001', tags: [] });
  });
});
