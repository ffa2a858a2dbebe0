import { recordEvent } from '../../audit/audit.store';
import { logFailure } from '../../db/retry';
import { describeDbError, isDbUnavailable } from '../../db/unavailable';
import { type RunnerMessage, runnerClose } from '../../runner-protocol/protocol';
import type { RunnerBatchResult } from '../../tasks/output/output.store';
import { lostOutputMessage } from '../../tasks/run/job';
import { findTask } from '../../tasks/store';
import {
  type PlanFacts,
  recordApplyOf,
  saveDrift,
  saveTaskPlan,
  sha256Hex,
} from '../../tasks/terraform-plans.store';
import { runnerRows } from './output-rows';
import { remoteActiveStatuses } from './runners.store';

import type { OutputMessage, RemoteRun, RemoteState, RunnerPlanFacts } from './state';

// A remote run's output batches and its end: stored in order exactly once (task.runner_seq), then the task's final
// status once every batch is in.

/** Stores consecutive output batches of a run in one transaction (one batch, or those that waited together). */
export async function onOutput(s: RemoteState, run: RemoteRun, received: OutputMessage[]) {
  const { ctx } = s;
  const { db, log } = s.ctx;
  // A batch sent again (its ack was lost) is acknowledged, not stored twice.
  const batches = received.filter((b) => b.seq > run.seq);
  const first = batches[0];
  const last = batches.at(-1);
  if (!first || !last) return s.send(run.conn, { type: 'ack', task_id: run.taskId, seq: run.seq });
  if (first.seq !== run.seq + 1) {
    // A batch went missing on the way: a reconnect makes the runner resend from the last stored one.
    log.warn({ taskId: run.taskId, seq: first.seq, stored: run.seq }, 'runner output batch out of order');
    return s.close(run.conn, runnerClose.protocol);
  }
  const rows = batches.flatMap((b) => runnerRows(run.taskId, b.lines, run.sink));
  // Batches of a task are stored one after another by the one run that holds it: the log's length is counted
  // once, with the first batch, and then kept (counting every batch costs as much as the log).
  const batch = {
    taskId: run.taskId,
    runnerId: run.runnerId,
    fromSeq: first.seq,
    seq: last.seq,
    rows,
    count: run.lines === null,
  };
  let result: RunnerBatchResult;
  try {
    result = await ctx.output.writeRunnerBatch(batch);
  } catch (err) {
    // A lost connection: the socket closes and the runner sends the batches again once it is back.
    if (isDbUnavailable(err)) throw err;
    // Refused by the database: batches taken together are tried one by one, so only the refused one is missing.
    if (batches.length > 1) {
      for (const one of batches) await onOutput(s, run, [one]);
      return;
    }
    // It would be refused again on every resend and hold the task forever. It is passed over as the server's own
    // log path does with such a batch, and the task cannot end as success.
    // The error only, never the statement: a driver's error can carry the lines' text.
    log.error(
      { reason: describeDbError(err), taskId: run.taskId, lines: rows.length },
      'storing runner output failed',
    );
    result = await ctx.output.writeRunnerBatch({ ...batch, rows: [], count: false });
    if (result.stored) {
      run.lost += rows.length;
      run.seq = last.seq;
      s.send(run.conn, { type: 'ack', task_id: run.taskId, seq: last.seq });
      return finishIfComplete(s, run);
    }
  }
  if (!result.stored) {
    const task = await findTask(db, run.taskId);
    if (!task || !remoteActiveStatuses.includes(task.status) || task.remote_runner_id !== run.runnerId)
      return endedElsewhere(s, run);
    run.seq = task.runner_seq;
    return s.send(run.conn, { type: 'ack', task_id: run.taskId, seq: run.seq });
  }
  run.seq = last.seq;
  const line = (result.before ?? run.lines ?? 0) + 1;
  run.lines = line - 1 + rows.length;
  ctx.metrics.outputLines.inc(rows.length);
  ctx.bus.publishLogs({
    project_id: run.projectId,
    task_id: run.taskId,
    lines: rows.map((row, i) => ({ output: row.output, time: row.time, line: line + i })),
  });
  s.send(run.conn, { type: 'ack', task_id: run.taskId, seq: last.seq });
  await finishIfComplete(s, run);
}

/** The server ended the task meanwhile (lost, unregistered): the runner stops it and forgets it. */
export function endedElsewhere(s: RemoteState, run: RemoteRun) {
  s.send(run.conn, { type: 'control', task_id: run.taskId, action: 'force' });
  s.send(run.conn, { type: 'done', task_id: run.taskId });
  s.forget(run, null);
}

export async function onStatus(
  s: RemoteState,
  run: RemoteRun,
  m: Extract<RunnerMessage, { type: 'status' }>,
) {
  const { ctx } = s;
  const { db } = s.ctx;
  if (m.commit_hash !== undefined || m.commit_message !== undefined)
    await db
      .updateTable('task')
      .set({
        ...(m.commit_hash !== undefined ? { commit_hash: m.commit_hash } : {}),
        ...(m.commit_message !== undefined ? { commit_message: m.commit_message } : {}),
      })
      .where('id', '=', run.taskId)
      .execute();
  if (m.plan) await keepPlan(s, run, m.plan, m.plan_facts);
  await ctx.status.setStatus(run.taskId, m.status);
}

/** A plan file a runner sent: kept in memory for the plan that follows it, if its digest is its content's. */
export function onPlanFile(run: RemoteRun, m: { digest: string; data: string }) {
  const data = Buffer.from(m.data, 'base64');
  if (data.toString('base64') !== m.data || sha256Hex(data) !== m.digest) {
    run.sink.line('The plan file the runner sent does not match its SHA-256: it is not kept');
    return;
  }
  run.planFile = { digest: m.digest, data: m.data };
}

/** Keeps a remote run's plan summary with its facts, and the plan file sent before it when it is that plan's. */
async function keepPlan(
  s: RemoteState,
  run: RemoteRun,
  summary: Parameters<typeof saveTaskPlan>[3],
  facts: RunnerPlanFacts | undefined,
) {
  const file = facts && run.planFile?.digest === facts.digest ? run.planFile.data : null;
  run.planFile = undefined;
  const full: PlanFacts | null = facts ? { ...facts, file } : null;
  await saveTaskPlan(s.ctx.db, s.ctx.box, { id: run.taskId, project_id: run.projectId }, summary, full);
}

export async function finishIfComplete(s: RemoteState, run: RemoteRun) {
  const { ctx } = s;
  const { db, log } = s.ctx;
  const f = run.finished;
  if (!f || run.seq < f.last_seq) return;
  run.finished = null;
  if (f.status === 'error' && f.message) run.sink.line(f.message);
  // Lines the database refused: said as a line, and a run that succeeded ends as error with that reason.
  const lost = run.lost ? lostOutputMessage(run.lost) : null;
  if (lost) run.sink.line(lost);
  await run.sink.close();
  const reason = f.status === 'error' && f.message ? f.message : f.status === 'success' ? lost : null;
  if (f.outputs && Object.keys(f.outputs).length > 0)
    await db
      .updateTable('task')
      .set({ outputs: JSON.stringify(f.outputs) })
      .where('id', '=', run.taskId)
      .execute();
  if (f.plan) await keepPlan(s, run, f.plan, f.plan_facts);
  if (f.drift)
    await saveDrift(db, { id: run.taskId, project_id: run.projectId, template_id: run.templateId }, f.drift);
  if (!reason && f.status === 'success') await recordApplyOf(db, run.taskId);
  const saved = reason
    ? await ctx.status.saveStatus(run.taskId, 'error', { message: reason })
    : await ctx.status.saveStatus(run.taskId, f.status);
  if (!saved && f.status !== 'stopped') await ctx.status.setStatus(run.taskId, 'stopped');
  const end = await findTask(db, run.taskId);
  run.tracked.finish(end?.status ?? f.status);
  await recordEvent(db, {
    project_id: run.projectId,
    user_id: run.userId,
    object_type: 'task',
    object_id: run.taskId,
    description: `Task ID ${run.taskId} finished: ${end?.status ?? f.status}`,
  }).catch((err) => logFailure(log, err, 'recording the task event failed', { taskId: run.taskId }));
  s.send(run.conn, { type: 'done', task_id: run.taskId });
  s.forget(
    run,
    end
      ? {
          taskId: run.taskId,
          projectId: run.projectId,
          templateId: run.templateId,
          userId: run.userId,
          status: end.status,
          templateType: run.templateType,
          giveUp: ctx.closing,
        }
      : null,
  );
}
