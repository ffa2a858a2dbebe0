import { describe, expect, it } from 'vitest';
import { codeOfIssue } from './errors';
import { templateTaskParams } from './templates';
import { isStateName, lockInfoInput, stateNameSchema } from './terraform-states';

describe('state names', () => {
  it('takes letters, digits, ".", "_" and "-", starting with a letter or digit, up to 100 characters', () => {
    for (const name of ['default', 'staging', 'eu-1.net_a', '0', 'x'.repeat(100)])
      expect(isStateName(name), name).toBe(true);
    for (const name of ['', '-x', '.x', '_x', 'a/b', 'a b', 'ä', '..', 'x'.repeat(101)])
      expect(isStateName(name), name).toBe(false);
    const refused = stateNameSchema.safeParse('a/b');
    expect(refused.success).toBe(false);
    expect(codeOfIssue(refused.error!.issues[0]!).code).toBe('state_name');
  });
});

describe("Terraform's LockInfo", () => {
  it('needs an ID and bounds every field', () => {
    expect(
      lockInfoInput.safeParse({ ID: 'abc', Who: 'me@host', Operation: 'OperationTypePlan' }).success,
    ).toBe(true);
    for (const bad of [
      {},
      { ID: '' },
      { ID: 5 },
      { ID: 'x'.repeat(201) },
      { ID: 'a', Who: 'w'.repeat(501) },
      null,
      'x',
    ])
      expect(lockInfoInput.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});

describe('a template on the built-in backend', () => {
  it('takes state_backend builtin or empty, and a state name or none', () => {
    for (const ok of [
      { state_backend: 'builtin' },
      { state_backend: '' },
      { state_backend: 'builtin', state_name: ' net-1 ' },
      { state_name: '' },
    ])
      expect(templateTaskParams.safeParse(ok).success, JSON.stringify(ok)).toBe(true);
    expect(templateTaskParams.parse({ state_name: ' net-1 ' }).state_name).toBe('net-1');
    const backend = templateTaskParams.safeParse({ state_backend: 's3' });
    expect(codeOfIssue(backend.error!.issues[0]!).code).toBe('not_one_of');
    const name = templateTaskParams.safeParse({ state_backend: 'builtin', state_name: '../other' });
    expect(codeOfIssue(name.error!.issues[0]!).code).toBe('state_name');
  });
});
