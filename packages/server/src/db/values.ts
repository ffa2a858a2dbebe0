import { type InsertObject, type Kysely, sql } from 'kysely';
import type { Dialect } from './dialect';
import type { Database } from './tables';

/** Dialect differences live here: booleans, times, inserted ids, counts. */
export const toBool = (v: number | boolean | null | undefined): boolean => v === 1 || v === true;
export const fromBool = (v: boolean | null | undefined): number => (v ? 1 : 0);
export const now = (): string => new Date().toISOString();

export function toCount(v: unknown): number {
  return typeof v === 'bigint' ? Number(v) : Number(v ?? 0);
}

/** Inserts one row and returns its generated id on every dialect. */
export async function insertReturningId<T extends keyof Database & string>(
  db: Kysely<Database>,
  dialect: Dialect,
  table: T,
  values: InsertObject<Database, T>,
): Promise<number> {
  if (dialect === 'postgres') {
    // biome-ignore lint/suspicious/noExplicitAny: Kysely cannot type a returning on a generic table
    const row = await (db.insertInto(table).values(values) as any).returning('id').executeTakeFirstOrThrow();
    return Number(row.id);
  }
  const result = await db.insertInto(table).values(values).executeTakeFirstOrThrow();
  return Number(result.insertId);
}

/** Parses JSON text stored in a column; a broken document reads as the fallback. */
export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** Parses JSON text that should hold an object; a broken document, or one that is no object, reads as {}. */
export function parseJsonObject(text: string | null | undefined): Record<string, unknown> {
  const v = parseJson<unknown>(text, {});
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * The database server's clock, in milliseconds since the epoch. Instances sharing a database agree on it however
 * far their own clocks drift, so heartbeats and their expiry are measured by it. (SQLite's clock is this
 * machine's.)
 */
export async function databaseNow(db: Kysely<Database>, dialect: Dialect): Promise<number> {
  const expression =
    dialect === 'postgres'
      ? sql<string>`floor(extract(epoch from clock_timestamp()) * 1000)::bigint`
      : dialect === 'mysql'
        ? sql<string>`floor(unix_timestamp(now(3)) * 1000)`
        : sql<string>`cast(round((julianday('now') - 2440587.5) * 86400000) as integer)`;
  const { rows } = await sql<{ ms: string | number }>`select ${expression} as ms`.execute(db);
  return Number(rows[0]?.ms);
}

/** True for a unique-index violation on any of the three databases. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errno?: number } | null;
  return (
    !!e &&
    (e.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
      e.code === '23505' ||
      e.code === 'ER_DUP_ENTRY' ||
      e.errno === 1062)
  );
}
