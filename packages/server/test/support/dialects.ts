import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { migrate, openDb } from '../../src/db';

/**
 * The migrations' own digest: a template database (see below) made by this code's migrations is named by it, so a
 * changed or added migration gets a new template and never an old one's schema.
 */
const migrationsDigest = (() => {
  const dir = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(join(dir, name)));
  hash.update(readFileSync(fileURLToPath(new URL('../../src/db/index.ts', import.meta.url))));
  return hash.digest('hex').slice(0, 16);
})();
const TEMPLATE = `sb_template_${migrationsDigest}`;

/** A database of `url` with every migration applied and nothing else (no secret-key check, no user). */
async function migrated(url: string) {
  const handle = openDb(url);
  try {
    await migrate(handle);
  } finally {
    await handle.destroy();
  }
}

/**
 * The dialects data/API tests run on: SQLite always, PostgreSQL and MariaDB/MySQL when SIGNALBOX_TEST_PG_URL /
 * SIGNALBOX_TEST_MYSQL_URL name a server. Each test app gets a fresh database.
 */
export type TestDialect = {
  name: 'sqlite' | 'postgres' | 'mysql';
  create(dataDir: string): Promise<{ url: string; drop(): Promise<void> }>;
};

/**
 * A SQLite test database starts as a copy of a migrated file (0.4–0.6 s of migrations for each app, a copy a few
 * ms): made once per machine and migrations digest, in a file of its own renamed into place (two workers making it
 * at once each make a whole one; the last rename wins).
 */
let sqliteTemplate: Promise<string> | null = null;
async function sqliteTemplateFile(): Promise<string> {
  const path = join(tmpdir(), `${TEMPLATE}.db`);
  if (existsSync(path)) return path;
  const building = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`;
  await migrated(`sqlite://${building}`);
  renameSync(building, path);
  return path;
}

const sqlite: TestDialect = {
  name: 'sqlite',
  async create(dataDir) {
    sqliteTemplate ??= sqliteTemplateFile();
    copyFileSync(await sqliteTemplate, join(dataDir, 'test.db'));
    return { url: `sqlite://${dataDir}/test.db`, drop: async () => {} };
  },
};

function withDatabase(url: string, name: string) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A PostgreSQL test database starts migrated: running every migration took 0.25–1 s for each of the hundreds of
 * apps a run builds, cloning a migrated template (CREATE DATABASE … TEMPLATE) 0.06–0.15 s. The first app of a run
 * (of any worker, one at a time by an advisory lock) migrates the template once; apps still run the migrator, which
 * finds nothing to do. A template outlives the run (the next run of the same migrations reuses it). MariaDB has no
 * such clone: see mysqlTemplate.
 */
async function pgTemplate(client: pg.Client, adminUrl: string) {
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [TEMPLATE]);
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [TEMPLATE]);
    if (found.rowCount) return;
    // Made under another name and renamed once complete: an interrupted run leaves no half-made template.
    const building = `${TEMPLATE}_${randomBytes(4).toString('hex')}`;
    await client.query(`CREATE DATABASE ${building}`);
    await migrated(withDatabase(adminUrl, building));
    await client.query(`ALTER DATABASE ${building} RENAME TO ${TEMPLATE}`);
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [TEMPLATE]);
  }
}

const postgres = (adminUrl: string): TestDialect => ({
  name: 'postgres',
  async create() {
    const name = `sb_test_${randomBytes(6).toString('hex')}`;
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await pgTemplate(client, adminUrl);
      await client.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
    } finally {
      await client.end();
    }
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

/**
 * What a MariaDB/MySQL test database is made of, read once per process from the migrated template (see below): its
 * tables as SHOW CREATE TABLE gives them, its triggers, and the tables the migrations put rows in.
 */
type MysqlRecipe = { tables: string[]; triggers: string[]; seeded: string[] };
let mysqlRecipe: Promise<MysqlRecipe> | null = null;
/** Marks a complete template: made last, after every migration; never copied. */
const TEMPLATE_DONE = 'sb_template_complete';
/** Connections a clone creates its tables over: each CREATE TABLE mostly waits for the server's disk. */
const CLONE_CONNECTIONS = 6;

type MysqlConnection = Awaited<ReturnType<typeof createConnection>>;
const rowsOf = async <T>(conn: MysqlConnection, query: string, values: unknown[] = []) =>
  (await conn.query(query, values))[0] as T[];

/**
 * The migrated MariaDB/MySQL template of this code's migrations on this server version (made once, by the first
 * test database of any worker, under a named lock), and what a test database copies of it. Migrating a MariaDB
 * database took 6–15 s on a busy 2-core machine (about 40 CREATE TABLEs and 50 ALTER TABLEs, each synced to disk)
 * and the migrator's lock is one for the whole server, so the workers' databases were made one at a time; a
 * test database is instead made from the template's final CREATE TABLE and CREATE TRIGGER statements (over a few
 * connections at once) and the rows the migrations wrote: 0.7–1.5 s. Its columns, indexes, triggers and counters
 * are the template's. The server's version names the template too, so a new server migrates anew.
 */
async function mysqlTemplate(adminUrl: string): Promise<MysqlRecipe> {
  const conn = await createConnection(adminUrl);
  try {
    const [{ version }] = await rowsOf<{ version: string }>(conn, 'SELECT VERSION() AS version');
    const name = `${TEMPLATE}_${createHash('sha256').update(version).digest('hex').slice(0, 8)}`;
    await conn.query('SELECT GET_LOCK(?, 600)', [name]);
    try {
      const done = await rowsOf(
        conn,
        'SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = ?',
        [name, TEMPLATE_DONE],
      );
      if (!done.length) {
        // An interrupted run's half-made template is made again.
        await conn.query(`DROP DATABASE IF EXISTS ${name}`);
        await conn.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
        await migrated(withDatabase(adminUrl, name));
        await conn.query(`CREATE TABLE ${name}.${TEMPLATE_DONE} (done INT)`);
      }
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [name]);
    }
    const tableNames = (
      await rowsOf<{ t: string }>(
        conn,
        "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name",
        [name],
      )
    )
      .map((row) => row.t)
      .filter((table) => table !== TEMPLATE_DONE);
    const tables: string[] = [];
    const seeded: string[] = [];
    for (const table of tableNames) {
      const [create] = await rowsOf<{ 'Create Table': string }>(
        conn,
        `SHOW CREATE TABLE ${name}.\`${table}\``,
      );
      tables.push(create!['Create Table']);
      const rows = await rowsOf(conn, `SELECT 1 FROM ${name}.\`${table}\` LIMIT 1`);
      if (rows.length) seeded.push(`INSERT INTO \`${table}\` SELECT * FROM ${name}.\`${table}\``);
    }
    const triggers: string[] = [];
    const triggerNames = await rowsOf<{ n: string }>(
      conn,
      'SELECT trigger_name AS n FROM information_schema.triggers WHERE trigger_schema = ? ORDER BY action_order',
      [name],
    );
    for (const { n } of triggerNames) {
      const [create] = await rowsOf<{ 'SQL Original Statement': string }>(
        conn,
        `SHOW CREATE TRIGGER ${name}.\`${n}\``,
      );
      triggers.push(create!['SQL Original Statement']);
    }
    return { tables, triggers, seeded };
  } finally {
    await conn.end();
  }
}

const mysql = (adminUrl: string): TestDialect => ({
  name: 'mysql',
  async create() {
    mysqlRecipe ??= mysqlTemplate(adminUrl);
    const recipe = await mysqlRecipe;
    const name = `sb_test_${randomBytes(6).toString('hex')}`;
    const conn = await createConnection(adminUrl);
    await conn.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await conn.end();
    const url = withDatabase(adminUrl, name);
    // Tables in any order (their foreign keys name tables made later), over a few connections at once.
    const pending = [...recipe.tables];
    const conns = await Promise.all(Array.from({ length: CLONE_CONNECTIONS }, () => createConnection(url)));
    try {
      await Promise.all(
        conns.map(async (c) => {
          await c.query('SET foreign_key_checks = 0');
          for (let create = pending.shift(); create; create = pending.shift()) await c.query(create);
        }),
      );
      const [first] = conns;
      for (const statement of [...recipe.triggers, ...recipe.seeded]) await first!.query(statement);
    } finally {
      await Promise.all(conns.map((c) => c.end()));
    }
    return {
      url,
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
