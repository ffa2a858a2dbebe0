import type { Db } from '../db';
import { toCount } from '../db/values';

/** How many output lines of the task carry a time at or after `time` (ISO text, so it compares in order). */
export async function countOutputSince(db: Db, taskId: number, time: string): Promise<number> {
  const row = await db
    .selectFrom('task_output')
    .select((eb) => eb.fn.countAll().as('count'))
    .where('task_id', '=', taskId)
    .where('time', '>=', time)
    .executeTakeFirst();
  return toCount(row?.count);
}
