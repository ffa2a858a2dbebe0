import { expect } from 'vitest';
import type { Client, Harness } from './harness';

/** Test helpers shared by the integration CRUD and webhook tests. */

/** A login/password key made through the key store API; its password is the integration's secret. */
export async function createSecretKey(
  client: Client,
  base: string,
  password: string,
  name = `secret-${password}`,
) {
  const res = await client.post(`${base}/keys`, {
    name,
    type: 'login_password',
    login_password: { login: 'webhook', password },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as number;
}

const tables = [
  'integration',
  'integration_alias',
  'integration_matcher',
  'integration_extract_value',
  'event',
] as const;

/** Every integration row and the event log, to assert that a refused request changed nothing. */
export async function integrationSnapshot(h: Harness) {
  const out: Record<string, unknown[]> = {};
  for (const table of tables)
    out[table] = await h.deps.db.selectFrom(table).selectAll().orderBy('id').execute();
  return out;
}

/** Sends each bad body and expects a 4xx `{error}` with nothing changed. Strings go raw (malformed JSON). */
export async function expectRefused(
  h: Harness,
  client: Client,
  method: 'POST' | 'PUT',
  url: string,
  bodies: unknown[],
) {
  const before = await integrationSnapshot(h);
  for (const body of bodies) {
    const res = await client.request(method, url, body);
    const label = `${method} ${url} ${JSON.stringify(body).slice(0, 200)}`;
    expect(res.statusCode, label).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, label).toBeLessThan(500);
    expect(typeof res.json().error, label).toBe('string');
  }
  expect(await integrationSnapshot(h)).toEqual(before);
}
