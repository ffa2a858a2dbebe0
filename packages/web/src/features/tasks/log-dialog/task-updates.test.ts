import type { TaskUpdateMessage } from '@signalbox/contracts';
import { QueryClient, QueryObserver } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Task, taskKeys } from '../api';
import { applyTaskUpdate, fetchTask, forgetTaskUpdates, mergeTaskUpdate } from './task-updates';

const task = (fields: Partial<Task>): Task => ({
  id: 7,
  template_id: 3,
  project_id: 1,
  status: 'waiting',
  message: '',
  user_id: 1,
  start: null,
  end: null,
  version: null,
  ...fields,
});

const update = (fields: Partial<TaskUpdateMessage>): TaskUpdateMessage => ({
  type: 'update',
  project_id: 1,
  template_id: 3,
  task_id: 7,
  status: 'running',
  start: '2026-01-01T10:00:00Z',
  end: null,
  version: null,
  commit_hash: 'abc123',
  ...fields,
});

/** GET tasks/7 answers each read with the next of `answers`, each when the test releases it. */
function serveTask() {
  const pending: { resolve: (t: Task) => void }[] = [];
  const fetchMock = vi.fn(
    () =>
      new Promise<Response>((resolve) => {
        pending.push({
          resolve: (t) =>
            resolve(
              new Response(JSON.stringify(t), {
                status: 200,
                headers: { 'content-type': 'application/json' },
              }),
            ),
        });
      }),
  );
  vi.stubGlobal('fetch', fetchMock);
  return { pending, fetchMock };
}

afterEach(() => {
  vi.unstubAllGlobals();
  forgetTaskUpdates();
});

describe('the task log dialog task', () => {
  it('ends at the status of an update that came before the first read answered with an older one', async () => {
    const { pending } = serveTask();
    const client = new QueryClient();
    const observer = new QueryObserver<Task>(client, {
      queryKey: taskKeys.task(1, 7),
      queryFn: () => fetchTask(1, 7),
      retry: false,
    });
    const unsubscribe = observer.subscribe(() => {});
    await expect.poll(() => pending.length).toBe(1);
    // The read saw the row while it was starting; the task then ran, and its update came before the answer.
    void applyTaskUpdate(client, 1, 7, update({ status: 'running' }));
    pending[0]?.resolve(task({ status: 'starting' }));
    // A second read (the row as it is now), if one is made.
    await vi.waitFor(() => {
      for (const p of pending.slice(1)) p.resolve(task({ status: 'running', start: '2026-01-01T10:00:00Z' }));
      const data = client.getQueryData<Task>(taskKeys.task(1, 7));
      expect(data?.status).toBe('running');
      expect(data?.start).toBe('2026-01-01T10:00:00Z');
    });
    // And it stays there once every read has answered.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(client.getQueryData<Task>(taskKeys.task(1, 7))?.status).toBe('running');
    unsubscribe();
    client.clear();
  });

  it('keeps a later status read from the server over an older update', () => {
    expect(mergeTaskUpdate(task({ status: 'success' }), update({ status: 'running' })).status).toBe(
      'success',
    );
    expect(mergeTaskUpdate(task({ status: 'starting' }), update({ status: 'running' }))).toMatchObject({
      status: 'running',
      commit_hash: 'abc123',
    });
    // A confirmed task runs again.
    expect(mergeTaskUpdate(task({ status: 'confirmed' }), update({ status: 'running' })).status).toBe(
      'running',
    );
    // Another task's update changes nothing.
    expect(mergeTaskUpdate(task({ status: 'waiting' }), update({ task_id: 8 })).status).toBe('waiting');
  });
});
