import { describe, expect, it } from 'vitest';
import { delayEnd } from './wait-time';

describe('when a delay node ends', () => {
  const from = new Date('2030-03-30T22:30:00Z');
  it('after its seconds', () => {
    expect(delayEnd({ seconds: 90, time_of_day: null, timezone: 'UTC' }, from).toISOString()).toBe(
      '2030-03-30T22:31:30.000Z',
    );
  });
  it('at the next time of day in its time zone, today or tomorrow', () => {
    const at = (time_of_day: string, timezone: string) =>
      delayEnd({ seconds: null, time_of_day, timezone }, from).toISOString();
    expect(at('23:00', 'UTC')).toBe('2030-03-30T23:00:00.000Z');
    expect(at('06:00', 'UTC')).toBe('2030-03-31T06:00:00.000Z');
    // 22:30 UTC is 00:30 in Berlin on the 31st (summer time began at 02:00 that night): 06:00 is 04:00 UTC.
    expect(at('06:00', 'Europe/Berlin')).toBe('2030-03-31T04:00:00.000Z');
    expect(at('20:00', 'America/New_York')).toBe('2030-03-31T00:00:00.000Z');
  });
});
