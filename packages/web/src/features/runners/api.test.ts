import { describe, expect, it } from 'vitest';
import { registerCommands, timeAgo } from './api';

describe('runner page helpers', () => {
  it('says how long ago a heartbeat was', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(timeAgo('2026-01-01T11:58:00Z', 'en', now)).toBe('2 minutes ago');
    expect(timeAgo('2026-01-01T11:59:55Z', 'en', now)).toBe('5 seconds ago');
    expect(timeAgo('2026-01-01T09:00:00Z', 'en', now)).toBe('3 hours ago');
    expect(timeAgo('2025-12-29T12:00:00Z', 'en', now)).toBe('3 days ago');
    expect(timeAgo('2026-01-01T11:58:00Z', 'de', now)).toBe('vor 2 Minuten');
    expect(timeAgo('not a time', 'en', now)).toBe('');
  });

  it('writes the register and start commands, naming the project of a project runner', () => {
    expect(registerCommands('https://ci.example.test', 'abc', null)).toBe(
      'npx signalbox runner register --url https://ci.example.test --registration-token abc\nnpx signalbox runner start',
    );
    expect(registerCommands('http://localhost:3000', 'tok', 7).split('\n')[0]).toBe(
      'npx signalbox runner register --url http://localhost:3000 --registration-token tok --project 7',
    );
  });
});
