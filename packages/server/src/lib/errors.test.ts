import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage, isErrorCode } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { AppError, badRequest, fieldError, notFound } from './errors';

const src = fileURLToPath(new URL('..', import.meta.url));
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });

describe('errors by code', () => {
  it('words the message and each field from the catalogue, naming fields by their keys', () => {
    const err = badRequest(
      { code: 'not_in_project', params: { what: 'template', id: 4 } },
      { template_id: { code: 'not_found', params: { what: 'template' } } },
    );
    expect(err.message).toBe('Template 4 does not exist in this project');
    expect(err.fields).toEqual({ template_id: 'Template not found' });
    const one = fieldError('vaults.0.script', { code: 'required', params: { field: 'script' } });
    expect(one.fieldErrors).toEqual({ 'vaults.0.script': { code: 'required', params: { field: 'script' } } });
    expect(one.message).toBe('Vault script is required');
    expect(notFound('task')).toMatchObject({ statusCode: 404, code: 'not_found', params: { what: 'task' } });
  });

  it('fills in the field key of a field error whose wording names its field', () => {
    const err = new AppError(
      400,
      { code: 'no_nul', params: { field: 'name' } },
      { 'survey.0.name': { code: 'required' } },
    );
    expect(err.fieldErrors?.['survey.0.name']).toEqual({ code: 'required', params: { field: 'name' } });
  });

  // The types already refuse an unknown code; this catches one written where the types cannot see it.
  it('throws only codes the catalogue words', () => {
    const unknown: string[] = [];
    for (const file of sources(src)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\bcoded\(\s*'([a-z0-9_]+)'|\bcode: '([a-z0-9_]+)'/g)) {
        const code = m[1] ?? m[2] ?? '';
        // A zod issue's own kind (`code: 'custom'`) is no error code.
        if (code !== 'custom' && !isErrorCode(code)) unknown.push(`${file.replace(src, '')}: ${code}`);
      }
    }
    expect(unknown).toEqual([]);
    expect(errorMessage({ code: 'internal' })).toBe('Internal server error');
  });
});
