import SQLite from 'better-sqlite3';
import { type Generated, Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { withStatementCache } from './index';

describe('SQLite statement cache', () => {
  const open: SQLite.Database[] = [];
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
  });
  function database() {
    const db = new SQLite(':memory:');
    open.push(db);
    db.exec('create table item (id integer primary key, name text)');
    return db;
  }

  it('prepares each SQL text once and answers from the kept statement', () => {
    const db = database();
    let prepared = 0;
    const prepare = db.prepare.bind(db);
    db.prepare = ((text: string) => {
      prepared++;
      return prepare(text);
    }) as typeof db.prepare;
    const cached = withStatementCache(db);
    const insert = cached.prepare('insert into item (name) values (?)');
    expect(cached.prepare('insert into item (name) values (?)')).toBe(insert);
    insert.run(['a']);
    cached.prepare('insert into item (name) values (?)').run(['b']);
    expect(cached.prepare('select name from item order by id').all([])).toEqual([
      { name: 'a' },
      { name: 'b' },
    ]);
    expect(prepared).toBe(2);
  });

  it('drops the least recently used statement when full', () => {
    const cached = withStatementCache(database(), 2);
    const first = cached.prepare('select 1');
    const second = cached.prepare('select 2');
    expect(cached.prepare('select 1')).toBe(first); // now the most recently used
    cached.prepare('select 3'); // evicts `select 2`
    expect(cached.prepare('select 1')).toBe(first);
    expect(cached.prepare('select 2')).not.toBe(second);
  });

  it('serves Kysely queries, transactions and streams with the same results', async () => {
    const db = new Kysely<{ item: { id: Generated<number>; name: string } }>({
      dialect: new SqliteDialect({ database: withStatementCache(database()) }),
    });
    await db.transaction().execute(async (trx) => {
      for (const name of ['a', 'b', 'c']) await trx.insertInto('item').values({ name }).execute();
    });
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('item').values({ name: 'rolled back' }).execute();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const names = async () =>
      (await db.selectFrom('item').select('name').orderBy('id').execute()).map((r) => r.name);
    expect(await names()).toEqual(['a', 'b', 'c']);
    const streamed: string[] = [];
    for await (const row of db.selectFrom('item').select('name').orderBy('id').stream())
      streamed.push(row.name);
    expect(streamed).toEqual(['a', 'b', 'c']);
    // The same statement again after the stream ended, and after an error in another one.
    await expect(sql`select * from missing_table`.execute(db)).rejects.toThrow(/no such table/);
    expect(await names()).toEqual(['a', 'b', 'c']);
  });
});
