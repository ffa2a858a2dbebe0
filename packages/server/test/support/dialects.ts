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
 * such clone, and making its tables from their SHOW CREATE TABLE took as long as migrating.
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
