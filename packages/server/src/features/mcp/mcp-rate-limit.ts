/** Tokens whose buckets are kept at most; past it the least recently used are forgotten (they start full again). */
const MAX_BUCKETS = 10_000;

/**
 * A token bucket per API token id: `perMinute` calls, refilled evenly over the minute (0: no limit). In memory, per
 * server instance. `take` spends one call and answers 0, or the whole seconds to wait when none is left.
 */
export function createTokenBuckets(perMinute: number, clock: () => number = Date.now) {
  const buckets = new Map<string, { left: number; at: number }>();
  return {
    take(tokenId: string): number {
      if (perMinute <= 0) return 0;
      const now = clock();
      const bucket = buckets.get(tokenId) ?? { left: perMinute, at: now };
      buckets.delete(tokenId);
      bucket.left = Math.min(perMinute, bucket.left + ((now - bucket.at) * perMinute) / 60_000);
      bucket.at = now;
      buckets.set(tokenId, bucket);
      if (buckets.size > MAX_BUCKETS) buckets.delete(buckets.keys().next().value as string);
      if (bucket.left >= 1) {
        bucket.left -= 1;
        return 0;
      }
      return Math.max(1, Math.ceil(((1 - bucket.left) * 60_000) / perMinute / 1000));
    },
  };
}
