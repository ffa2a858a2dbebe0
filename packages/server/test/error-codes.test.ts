import { ErrorCode } from '@signalbox/contracts';
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

  it('names a refused field with the code of its message and the field label', async () => {
    const res = await admin.post('/api/projects', { name: '' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      answeredError(res, {
        error: 'Name is required',
        code: ErrorCode.required,
        params: { field: 'Name' },
        fields: { name: 'Name is required' },
        field_errors: { name: { code: ErrorCode.required, params: { field: 'Name' } } },
      }),
    );
  });

  it('gives a limit as a parameter', async () => {
    const res = await admin.post('/api/projects', { name: 'x'.repeat(101) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'Name must be at most 100 characters',
      code: ErrorCode.tooLong,
      params: { field: 'Name', max: 100 },
      field_errors: { name: { code: ErrorCode.tooLong, params: { field: 'Name', max: 100 } } },
    });
  });

  it('codes a field message that has no code of its own as an invalid value', async () => {
    const res = await admin.post('/api/projects', { name: 'P', alert: 'yes' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'Alert must be true or false',
      code: ErrorCode.invalidValue,
      fields: { alert: 'Alert must be true or false' },
      field_errors: { alert: { code: ErrorCode.invalidValue } },
    });
  });

  it('names what was not found', async () => {
    const { projectId } = await h.projectWithTeam(admin);
    const res = await admin.get(`/api/project/${projectId}/templates/999999`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(
      answeredError(res, {
        error: 'Template not found',
        code: ErrorCode.notFound,
        params: { what: 'Template' },
      }),
    );
  });

  it('codes a refusal to a signed-in user without the right', async () => {
    const outsider = await h.userClient();
    const { projectId } = await h.projectWithTeam(admin);
    const res = await outsider.get(`/api/project/${projectId}/templates`);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual(
      answeredError(res, { error: 'You are not a member of this project', code: ErrorCode.forbidden }),
    );
  });

  it('codes a conflict', async () => {
    const user = { name: 'Taken', username: 'taken', email: 'taken@example.test', password: 'secret-pw' };
    expect((await admin.post('/api/users', user)).statusCode).toBe(201);
    const res = await admin.post('/api/users', { ...user, email: 'other@example.test' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual(
      answeredError(res, { error: 'Username taken is already taken', code: ErrorCode.conflict }),
    );
  });

  it('codes the two sign-in refusals', async () => {
    const anonymous = await h.anonymous().get('/api/projects');
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toEqual(
      answeredError(anonymous, { error: 'Not signed in', code: ErrorCode.notSignedIn }),
    );

    const wrong = await h
      .anonymous()
      .post('/api/auth/login', { auth: admin.username, password: 'not-the-password' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual(
      answeredError(wrong, { error: 'Incorrect login or password', code: ErrorCode.incorrectLogin }),
    );
  });

  it('codes a body that is not JSON', async () => {
    const res = await admin.request('POST', '/api/projects', '{"name":');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      answeredError(res, { error: 'Request body is not valid JSON', code: ErrorCode.bodyNotJson }),
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
      answeredError(res, { error: 'Request body is too large', code: ErrorCode.bodyTooLarge }),
    );
  });

  it('codes a NUL character, naming the field', async () => {
    const res = await admin.post('/api/projects', { name: 'a\0b' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(
      answeredError(res, {
        error: 'name must not contain NUL characters',
        code: ErrorCode.noNul,
        params: { field: 'name' },
        fields: { name: 'name must not contain NUL characters' },
        field_errors: { name: { code: ErrorCode.noNul, params: { field: 'name' } } },
      }),
    );
  });
});
