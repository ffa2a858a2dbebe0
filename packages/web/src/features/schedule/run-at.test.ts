import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromLocalInput, nextWholeHour, toLocalInput } from './run-at';

describe('run-once times in the browser', () => {
  const saved = process.env.TZ;
  beforeAll(() => {
    // Berlin: UTC+1 in winter, UTC+2 in summer.
    process.env.TZ = 'Europe/Berlin';
  });
  afterAll(() => {
    process.env.TZ = saved;
  });

  it('reads a local date and time as UTC, across daylight saving time', () => {
    expect(fromLocalInput('2030-01-15T09:30')).toBe('2030-01-15T08:30:00.000Z');
    expect(fromLocalInput('2030-07-15T09:30')).toBe('2030-07-15T07:30:00.000Z');
    expect(fromLocalInput('2030-07-15T09:30:15')).toBe('2030-07-15T07:30:15.000Z');
  });

  it('refuses what is not a date and time', () => {
    for (const bad of [
      '',
      '2030-02-30T10:00',
      '2030-01-15',
      'tomorrow',
      '2030-01-15 09:30',
      '2030-13-01T00:00',
    ])
      expect(fromLocalInput(bad), bad).toBeNull();
  });

  it('shows a stored UTC time in local time, and round-trips it', () => {
    expect(toLocalInput('2030-01-15T08:30:00.000Z')).toBe('2030-01-15T09:30');
    expect(toLocalInput('2030-07-15T07:30:00.000Z')).toBe('2030-07-15T09:30');
    expect(fromLocalInput(toLocalInput('2030-03-31T22:05:00.000Z'))).toBe('2030-03-31T22:05:00.000Z');
    expect(toLocalInput(null)).toBe('');
    expect(toLocalInput('garbage')).toBe('');
  });

  it('suggests the next whole hour', () => {
    expect(nextWholeHour(new Date('2030-01-15T08:30:12Z'))).toBe('2030-01-15T09:00:00.000Z');
  });
});
