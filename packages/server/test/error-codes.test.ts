import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from './support/dialects';
import { answeredError, type Client, createHarness, type Harness } from './support/harness';

/**
 * Every error answer carries a stable code beside its English message, with the values the message embeds, and a
 * code per refused field, so clients branch and translate on the code rather than on the wording.
 */
describe.each(testDialects())('error codes on $name', (dialect) => {
  let h: Harness;
  let admin: Client;

  beforeAll(async () => {
    h = await createHarness(dialect);
    admin = await h.userClient({ admin: true });
  });
  afterAll(() => h?.close());

  it('names a refused field with the code of its message and the field key', async () => {
    const res = await admin.post('/api/projects', { name: '' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      answeredError(res, {
        error: 'Name is required',
        code: 'required',
        params: { field: 'name' },
        fields: { name: 'Name is required' },
        field_errors: { name: { code: 'required', params: { field: 'name' } } },
      }),
    );
  });

  it('gives a limit as a parameter', async () => {
    const res = await admin.post('/api/projects', { name: 'x'.repeat(101) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'Name must be at most 100 characters',
      code: 'too_long',
      params: { field: 'name', max: 100 },
      field_errors: { name: { code: 'too_long', params: { field: 'name', max: 100 } } },
    });
  });

  it('codes a value of the wrong type by the type it must have', async () => {
    const res = await admin.post('/api/projects', { name: 'P', alert: 'yes' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'Alert must be true or false',
      code: 'not_boolean',
      fields: { alert: 'Alert must be true or false' },
      field_errors: { alert: { code: 'not_boolean', params: { field: 'alert' } } },
    });
  });

  it('names what was not found', async () => {
    const { projectId } = await h.projectWithTeam(admin);
    const res = await admin.get(`/api/project/${projectId}/templates/999999`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(
      answeredError(res, {
        error: 'Template not found',
        code: 'not_found',
        params: { what: 'template' },
      }),
    );
  });

  it('codes a refusal to a signed-in user without the right', async () => {
    const outsider = await h.userClient();
    const { projectId } = await h.projectWithTeam(admin);
    const res = await outsider.get(`/api/project/${projectId}/templates`);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      answeredError(res, { error: 'You are not a member of this project', code: 'not_project_member' }),
    );
  });

  it('codes a conflict', async () => {
    const user = { name: 'Taken', username: 'taken', email: 'taken@example.test', password: 'secret-pw' };
    expect((await admin.post('/api/users', user)).statusCode).toBe(201);
    const res = await admin.post('/api/users', { ...user, email: 'other@example.test' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(
      answeredError(res, {
        error: 'Username taken is already taken',
        code: 'username_taken',
        params: { username: 'taken' },
      }),
    );
  });

  it('codes the two sign-in refusals', async () => {
    const anonymous = await h.anonymous().get('/api/projects');
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual(
      answeredError(anonymous, { error: 'Not signed in', code: 'not_signed_in' }),
    );

    const wrong = await h
      .anonymous()
      .post('/api/auth/login', { auth: admin.username, password: 'not-the-password' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual(
      answeredError(wrong, { error: 'Incorrect login or password', code: 'incorrect_login' }),
    );
  });

  it('codes a body that is not JSON', async () => {
    const res = await admin.request('POST', '/api/projects', '{"name":');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      answeredError(res, { error: 'Request body is not valid JSON', code: 'body_not_json' }),
    );
  });

  it('codes a body that is too large', async () => {
    const res = await admin.request(
      'POST',
      '/api/projects',
      JSON.stringify({ name: 'x'.repeat(5 * 1024 * 1024) }),
    );
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual(
      answeredError(res, { error: 'Request body is too large', code: 'body_too_large' }),
    );
  });

  it('codes a NUL character, naming the field', async () => {
    const res = await admin.post('/api/projects', { name: 'a\0b' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      answeredError(res, {
        error: 'Name must not contain NUL characters',
        code: 'no_nul',
        params: { field: 'name' },
        fields: { name: 'Name must not contain NUL characters' },
        field_errors: { name: { code: 'no_nul', params: { field: 'name' } } },
      }),
    );
  });

  // The answers given outside the routes' handlers carry a code too: the request guards', the webhook
  // receiver's and the not-found handler's.
  it('codes the answers no route handler writes', async () => {
    const answers = [
      [await h.anonymous().get('/api/projects/%E0%A4%A'), 400, 'url_malformed'],
      [await admin.get(`/api/project/${'1'.repeat(600)}`), 414, 'path_param_too_long'],
      [await admin.get('/api/no-such-route'), 404, 'route_not_found'],
      [await h.anonymous().post('/api/integrations/no-such-alias', {}), 404, 'webhook_not_found'],
    ] as const;
    for (const [res, status, code] of answers) {
      expect([res.statusCode, res.json().code], res.body).toEqual([status, code]);
      expect(typeof res.json().error).toBe('string');
    }
    expect((await admin.get('/api/no-such-route')).json().error).toBe('Not found: GET /api/no-such-route');
  });
});
