import { describe, expect, it } from 'vitest';
import {
  coded,
  codeOfIssue,
  errorCodes,
  errorMessage,
  errorTexts,
  fieldKeyOf,
  issue,
  placeholdersOf,
  readIssue,
} from './errors';
import { taskRetentionDays } from './projects';
import { templateInput } from './templates';
import { userCreateInput } from './users';

describe('the error catalogue', () => {
  it('words every code in English, placeholders named as identifiers', () => {
    expect(errorCodes.length).toBeGreaterThan(100);
    for (const code of errorCodes) {
      expect(code).toMatch(/^[a-z0-9_]+$/);
      expect(errorTexts[code].trim(), code).not.toBe('');
      for (const name of placeholdersOf(errorTexts[code])) expect(name).toMatch(/^[a-z_]+$/);
    }
  });

  it('fills params in, naming fields and things in English', () => {
    expect(errorMessage(coded('too_long', { field: 'name', max: 30 }))).toBe(
      'Name must be at most 30 characters',
    );
    expect(errorMessage(coded('required', { field: 'git_url' }))).toBe('URL is required');
    expect(errorMessage(coded('not_found', { what: 'task' }))).toBe('Task not found');
    expect(errorMessage(coded('no_permission'))).toBe('You do not have permission to do this');
    // A field the catalogue has no name for is shown by its key.
    expect(errorMessage(coded('required', { field: 'some_new_field' }))).toBe('some_new_field is required');
  });
});

describe('zod issues', () => {
  it('carry their code and params in the message, never English', () => {
    expect(readIssue(issue('too_deep', { max: 64 }))).toEqual({ code: 'too_deep', params: { max: 64 } });
    expect(readIssue(issue('incorrect_url'))).toEqual({ code: 'incorrect_url' });
    expect(readIssue('Name is required')).toBeUndefined();
    expect(readIssue('@no_such_code')).toBeUndefined();
  });

  it('are coded by the kind of check when the schema gives no code, the field from the path', () => {
    const issues = userCreateInput.safeParse(
      { name: '', username: 'a b', email: 'x', admin: 'yes' },
      {
        reportInput: true,
      },
    ).error?.issues;
    expect(issues?.map(codeOfIssue)).toEqual([
      { code: 'required', params: { field: 'name' } },
      { code: 'username_spaces', params: { field: 'username' } },
      { code: 'invalid_email', params: { field: 'email' } },
      { code: 'not_boolean', params: { field: 'admin' } },
    ]);
    const retention = taskRetentionDays.safeParse(99_999).error?.issues[0];
    expect(retention && codeOfIssue(retention)).toEqual({
      code: 'too_large',
      params: { field: 'body', max: 36_500 },
    });
    const template =
      templateInput.safeParse({ name: '', app: 'ansible' }, { reportInput: true }).error?.issues ?? [];
    const name = template.find((i) => i.path[0] === 'name');
    expect(name && codeOfIssue(name)).toEqual({ code: 'required', params: { field: 'name' } });
  });

  it('name a nested field by its last key', () => {
    expect(fieldKeyOf(['vaults', 0, 'script'])).toBe('script');
    expect(fieldKeyOf([])).toBe('body');
  });
});
