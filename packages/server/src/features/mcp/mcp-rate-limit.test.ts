import { describe, expect, it } from 'vitest';
import { createTokenBuckets } from './mcp-rate-limit';

describe('MCP calls per token', () => {
  it('spends a full bucket, then refills evenly over the minute, per token', () => {
    let now = 0;
    const buckets = createTokenBuckets(6, () => now);
    for (let i = 0; i < 6; i += 1) expect(buckets.take('a')).toBe(0);
    // Six a minute: one call comes back every 10 s.
    expect(buckets.take('a')).toBe(10);
    expect(buckets.take('b')).toBe(0);
    now = 9_000;
    expect(buckets.take('a')).toBe(1);
    now = 10_000;
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBe(10);
    // A bucket never holds more than the limit.
    now = 10 * 60_000;
    for (let i = 0; i < 6; i += 1) expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBeGreaterThan(0);
  });

  it('never limits when the limit is 0', () => {
    const buckets = createTokenBuckets(0);
    for (let i = 0; i < 1000; i += 1) expect(buckets.take('a')).toBe(0);
  });
});
