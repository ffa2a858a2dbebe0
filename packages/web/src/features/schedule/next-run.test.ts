import type { Schedule } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { nextRunOf } from './next-run';

const schedule = (over: Partial<Schedule>): Schedule => ({
  id: 1,
  project_id: 1,
  template_id: 1,
  workflow_id: null,
  type: '',
  cron_format: '0 3 * * *',
  run_at: null,
  delete_after_run: false,
  last_run_at: null,
  run_missed: false,
  repository_id: null,
  name: '',
  active: true,
  tpl_name: 'T',
  task_params: {},
  ...over,
});

describe('nextRunOf', () => {
  const now = new Date('2030-01-10T12:00:00Z');
  it('reads the cron in the schedule time zone', () => {
    expect(nextRunOf(schedule({}), 'UTC', now)?.toISOString()).toBe('2030-01-11T03:00:00.000Z');
    // 03:00 in Tokyo (UTC+9) is 18:00 UTC of the day before.
    expect(nextRunOf(schedule({}), 'Asia/Tokyo', now)?.toISOString()).toBe('2030-01-10T18:00:00.000Z');
  });
  it('gives a run-once schedule its run_at and an inactive or broken one nothing', () => {
    const at = '2030-02-01T09:30:00.000Z';
    expect(
      nextRunOf(schedule({ type: 'run_at', cron_format: '', run_at: at }), 'UTC', now)?.toISOString(),
    ).toBe(at);
    expect(nextRunOf(schedule({ active: false }), 'UTC', now)).toBeNull();
    expect(nextRunOf(schedule({ cron_format: 'nonsense' }), 'UTC', now)).toBeNull();
  });
});
