import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';

/**
 * The dialects data/API tests run on: SQLite always, PostgreSQL and MariaDB/MySQL when SIGNALBOX_TEST_PG_URL /
 * SIGNALBOX_TEST_MYSQL_URL name a server. Each test app gets a fresh database.
 */
export type TestDialect = {
  name: 'sqlite' | 'postgres' | 'mysql';
  create(dataDir: string): Promise<{ url: string; drop(): Promise<void> }>;
};

const sqlite: TestDialect = {
  name: 'sqlite',
  async create(dataDir) {
    return { url: `sqlite://${dataDir}/test.db`, drop: async () => {} };
  },
};

function withDatabase(url: string, name: string) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

const postgres = (adminUrl: string): TestDialect => ({
  name: 'postgres',
  async create() {
    const name = `sb_test_${randomBytes(6).toString('hex')}`;
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    await client.end();
    return {
      url: withDatabase(adminUrl, name),
      async drop() {
        const c = new pg.Client({ connectionString: adminUrl });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  },
});

const mysql = (adminUrl: string): TestDialect => ({
  name: 'mysql',
  async create() {
    const name = `sb_test_${randomBytes(6).toString('hex')}`;
    const conn = await createConnection(adminUrl);
    await conn.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await conn.end();
    return {
      url: withDatabase(adminUrl, name),
      async drop() {
        const c = await createConnection(adminUrl);
        await c.query(`DROP DATABASE IF EXISTS ${name}`);
        await c.end();
      },
    };
  },
});

/** Every dialect this machine can test: SQLite, and PostgreSQL and MariaDB/MySQL when their URLs are set. */
export function configuredDialects(): TestDialect[] {
  const list = [sqlite];
  if (process.env.SIGNALBOX_TEST_PG_URL) list.push(postgres(process.env.SIGNALBOX_TEST_PG_URL));
  if (process.env.SIGNALBOX_TEST_MYSQL_URL) list.push(mysql(process.env.SIGNALBOX_TEST_MYSQL_URL));
  return list;
}

/**
 * The dialects of this test run. The vitest project chooses them with SIGNALBOX_TEST_DIALECTS (`api`: sqlite,
 * `dialects`: postgres,mysql); without it, every configured dialect.
 */
export function testDialects(): TestDialect[] {
  const chosen = process.env.SIGNALBOX_TEST_DIALECTS?.split(',').map((name) => name.trim());
  return configuredDialects().filter((dialect) => !chosen || chosen.includes(dialect.name));
}

/**
 * One database several app instances open (the SQLite file, or one PostgreSQL/MySQL database): `dialect` hands
 * out that same database every time; `drop` removes it. `prefix` names its temporary folder.
 */
export async function sharedDatabase(dialect: TestDialect, prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = await dialect.create(dir);
  const same: TestDialect = {
    name: dialect.name,
    create: async () => ({ url: db.url, drop: async () => {} }),
  };
  return {
    dialect: same,
    async drop() {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
