import { describe, expect, it } from 'vitest';
import { placeTask, type RunnerSlots, requiredTag } from './placement';

const runner = (id: number, values: Partial<RunnerSlots> = {}): RunnerSlots => ({
  id,
  project_id: null,
  tags: [],
  active: true,
  max: 1,
  load: 0,
  here: true,
  ...values,
});
const task = { project_id: 7 };

describe('remote runner placement', () => {
  it("takes the template's tag before the inventory's, ignoring blanks", () => {
    expect(requiredTag('gpu', 'arm')).toBe('gpu');
    expect(requiredTag(null, 'arm')).toBe('arm');
    expect(requiredTag(' ', '')).toBeNull();
  });

  it('keeps untagged tasks on the server unless every task runs remotely', () => {
    expect(placeTask(task, null, false, [runner(1)])).toEqual({ place: 'server' });
    expect(placeTask(task, null, true, [runner(1, { tags: ['x'] })])).toEqual({
      place: 'runner',
      runnerId: 1,
    });
    expect(placeTask(task, null, true, [])).toEqual({
      place: 'wait',
      reason: 'Waiting: no runner is online',
    });
  });

  it('says why a tagged task waits: no runner with the tag, or every one busy', () => {
    const gpu = ['gpu'];
    const none = { place: 'wait', reason: 'Waiting: no runner with tag "gpu" is online' };
    expect(placeTask(task, 'gpu', false, [runner(1, { tags: ['cpu'] })])).toEqual(none);
    expect(placeTask(task, 'gpu', false, [runner(1, { tags: gpu, project_id: 8 })])).toEqual(none);
    expect(placeTask(task, 'gpu', false, [runner(1, { tags: gpu, load: 1 })])).toEqual({
      place: 'wait',
      reason: 'Waiting: every runner with tag "gpu" is busy',
    });
    expect(placeTask(task, 'gpu', false, [runner(1, { tags: gpu, here: false })])).toEqual({
      place: 'elsewhere',
    });
  });

  it('names the disabled runners a task waits for, rather than calling them offline', () => {
    const gpu = ['gpu'];
    expect(
      placeTask(task, 'gpu', false, [
        runner(1, { tags: gpu, active: false, name: 'builder' }),
        runner(2, { tags: ['cpu'], name: 'other' }),
      ]),
    ).toEqual({ place: 'wait', reason: 'Waiting: runner builder is disabled' });
    expect(
      placeTask(task, null, true, [
        runner(1, { active: false, name: 'a' }),
        runner(2, { active: false, name: 'b' }),
      ]),
    ).toEqual({ place: 'wait', reason: 'Waiting: runners a, b are disabled' });
  });

  it('gives a draining runner no task', () => {
    expect(placeTask(task, null, true, [runner(1, { draining: true })])).toEqual({
      place: 'wait',
      reason: 'Waiting: no runner is online',
    });
    expect(placeTask(task, null, true, [runner(1, { draining: true }), runner(2)])).toEqual({
      place: 'runner',
      runnerId: 2,
    });
  });

  it('prefers project runners, then the least loaded, then the oldest', () => {
    const gpu = ['gpu'];
    const runners = [
      runner(1, { tags: gpu, max: 5, load: 0 }),
      runner(2, { tags: gpu, max: 5, load: 3, project_id: 7 }),
      runner(3, { tags: gpu, max: 5, load: 1, project_id: 7 }),
    ];
    expect(placeTask(task, 'gpu', false, runners)).toEqual({ place: 'runner', runnerId: 3 });
    expect(placeTask(task, 'gpu', false, runners.slice(0, 1))).toEqual({ place: 'runner', runnerId: 1 });
    const equal = [runner(5, { tags: gpu, max: 3, load: 1 }), runner(4, { tags: gpu, max: 3, load: 1 })];
    expect(placeTask(task, 'gpu', false, equal)).toEqual({ place: 'runner', runnerId: 4 });
  });
});
