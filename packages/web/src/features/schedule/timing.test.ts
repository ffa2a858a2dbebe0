import { describe, expect, it } from 'vitest';
import { fromCron, toCron } from './timing';

describe('schedule timing selector', () => {
  it('builds cron from checked values', () => {
    expect(
      toCron({ timing: 'daily', minutes: [30], hours: [2, 1], days: [], months: [], weekdays: [] }),
    ).toBe('30 1,2 * * *');
    expect(
      toCron({ timing: 'hourly', minutes: [0, 15], hours: [4], days: [], months: [], weekdays: [] }),
    ).toBe('0,15 * * * *');
    expect(toCron({ timing: 'weekly', minutes: [], hours: [], days: [], months: [], weekdays: [1, 5] })).toBe(
      '0 0 * * 1,5',
    );
    expect(
      toCron({ timing: 'yearly', minutes: [5], hours: [3], days: [2], months: [12], weekdays: [] }),
    ).toBe('5 3 2 12 *');
    expect(toCron({ timing: 'minutely', minutes: [5], hours: [], days: [], months: [], weekdays: [] })).toBe(
      '* * * * *',
    );
  });

  it('reads back what it could build, and nothing else', () => {
    expect(fromCron('0 0 1 * *')?.timing).toBe('monthly');
    expect(fromCron('30 1,2 * * *')).toMatchObject({ timing: 'daily', minutes: [30], hours: [1, 2] });
    expect(fromCron('*/5 * * * *')).toBeNull();
    expect(fromCron('7 * * * *')).toBeNull();
    expect(fromCron('@daily')).toBeNull();
    // Every minute is a timing of its own.
    expect(fromCron('* * * * *')).toMatchObject({ timing: 'minutely' });
    expect(fromCron(' *  * * * * ')?.timing).toBe('minutely');
    expect(fromCron('* 1 * * *')).toBeNull();
    // Shown in the panel, these would be rebuilt as another cron, so the panel does not claim them.
    expect(fromCron('0 * 5 * *')).toBeNull();
    expect(fromCron('0 0 1 * 1')).toBeNull();
    expect(fromCron('0 25 * * *')).toBeNull();
    expect(fromCron('0 2,1 * * *')).toMatchObject({ timing: 'daily', hours: [2, 1] });
  });

  it('round-trips every cron it reads', () => {
    for (const cron of ['0 0 * * *', '5,10 3 * * 1,5', '0 0 1 * *', '5 3 2 12 *', '0,15 * * * *']) {
      const state = fromCron(cron);
      expect(state).not.toBeNull();
      if (state) expect(toCron(state)).toBe(cron);
    }
  });
});
