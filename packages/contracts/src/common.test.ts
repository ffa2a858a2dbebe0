import { describe, expect, it } from 'vitest';
import { backupTemplate } from './backup';
import { findNulCharacter, idParam, jsonDepth, jsonText, MAX_JSON_DEPTH } from './common';
import { environmentInput } from './environments';
import { codeOfIssue, errorMessage } from './errors';
import { newTaskInput } from './task-api';

/** The English wording of a zod issue, as the server answers it. */
const said = (issue: Parameters<typeof codeOfIssue>[0]) => errorMessage(codeOfIssue(issue));

describe('findNulCharacter', () => {
  it('finds the path of the first string or key holding U+0000', () => {
    expect(findNulCharacter('a\u0000')).toEqual([]);
    expect(findNulCharacter({ a: 'x', b: [1, { c: 'y\u0000' }] })).toEqual(['b', 1, 'c']);
    expect(findNulCharacter({ ok: { 'bad\u0000key': 1 } })).toEqual(['ok', 'bad\u0000key']);
    expect(findNulCharacter({ a: 'x\u0001\u001f\u007f', b: [null, 1, true] })).toBeNull();
    expect(findNulCharacter(new Uint8Array([97, 0, 98]))).toBeNull();
  });

  it('walks any depth without recursion, and cycles once', () => {
    let deep: unknown = 'end\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findNulCharacter(deep)).toHaveLength(200_000);
    const cyclic: Record<string, unknown> = { a: 'x' };
    cyclic.self = cyclic;
    expect(findNulCharacter(cyclic)).toBeNull();
    // 200,000 levels take well under a second alone; a busy 2-core machine needs more.
  }, 30_000);
});

describe('idParam', () => {
  it('takes plain decimal ids only', () => {
    expect(idParam.parse('42')).toBe(42);
    for (const bad of ['0x1', '1e3', ' 1', '', '0b1', 'Infinity', '1.5', '-1', '0', '2147483648'])
      expect(idParam.safeParse(bad).success, bad).toBe(false);
    expect(idParam.safeParse('abc').error?.issues.map(said)[0]).toBe('Request body must be a number');
    expect(idParam.safeParse('1.5').error?.issues.map(said)[0]).toBe('Request body must be an integer');
    expect(idParam.safeParse('-1').error?.issues.map(said)[0]).toBe('Request body must be greater than 0');
  });
});

describe('JSON nesting depth', () => {
  it('counts objects and arrays, not brackets inside strings', () => {
    expect(jsonDepth('1')).toBe(0);
    expect(jsonDepth('{"a":[1,{"b":[]}]}')).toBe(4);
    expect(jsonDepth('{"a":"[[[[\\"{{{"}')).toBe(1);
  });

  it('refuses JSON text nested deeper than the limit', () => {
    const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(jsonText().safeParse(nested(MAX_JSON_DEPTH)).success).toBe(true);
    expect(
      jsonText()
        .safeParse(nested(MAX_JSON_DEPTH + 1))
        .error?.issues.map(said)[0],
    ).toBe(`Request body must not nest objects or arrays more than ${MAX_JSON_DEPTH} levels deep`);
  });
});

describe('JSON text fields of other contracts', () => {
  const deep = (n: number) => `{"a":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
  const tooDeep = (label: string) =>
    `${label} must not nest objects or arrays more than ${MAX_JSON_DEPTH} levels deep`;

  it('refuses over-deep task environments, environment JSON and backup documents', () => {
    const task = (environment: string) => newTaskInput.safeParse({ template_id: 1, environment });
    expect(task(deep(MAX_JSON_DEPTH)).success).toBe(true);
    expect(task(deep(MAX_JSON_DEPTH + 1)).error?.issues.map(said)[0]).toBe(tooDeep('Extra variables'));
    const env = (json: string) => environmentInput.safeParse({ name: 'e', json, env: '{}' });
    expect(env(deep(MAX_JSON_DEPTH)).success).toBe(true);
    expect(env(deep(MAX_JSON_DEPTH + 1)).success).toBe(false);
    const restored = backupTemplate.safeParse({ name: 't', task_params: deep(MAX_JSON_DEPTH + 1) });
    expect(restored.error?.issues.map(said)[0]).toBe(tooDeep('Task params'));
  });
});
