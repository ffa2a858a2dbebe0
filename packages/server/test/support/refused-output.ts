import { sql } from 'kysely';
import type { Deps } from '../../src/deps';

/**
 * Makes the database refuse every output line that starts with `prefix` (a trigger raising an error on insert), as
 * a database refuses rows for reasons of its own: the insert fails with an error that is not a lost connection.
 */
export async function refuseOutputStartingWith(
  { db, dialect }: Pick<Deps, 'db' | 'dialect'>,
  prefix: string,
) {
  if (!/^[a-z-]+$/.test(prefix)) throw new Error('a plain prefix only');
  const like = `'${prefix}%'`;
  if (dialect === 'sqlite') {
    await sql
      .raw(
        `create trigger refuse_output before insert on task_output when new.output like ${like} begin select raise(abort, 'output refused'); end`,
      )
      .execute(db);
  } else if (dialect === 'postgres') {
    await sql
      .raw(
        `create function refuse_output() returns trigger language plpgsql as $$ begin if new.output like ${like} then raise exception 'output refused'; end if; return new; end $$`,
      )
      .execute(db);
    await sql
      .raw(
        'create trigger refuse_output before insert on task_output for each row execute function refuse_output()',
      )
      .execute(db);
  } else {
    await sql
      .raw(
        `create trigger refuse_output before insert on task_output for each row begin if new.output like ${like} then signal sqlstate '45000' set message_text = 'output refused'; end if; end`,
      )
      .execute(db);
  }
}
