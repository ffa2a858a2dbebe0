/**
 * The next build version (reference "getNextBuildVersion"): the last numeric run of the start version is the
 * counter; when the previous build shares prefix and suffix the counter becomes max(start, previous + 1),
 * otherwise the start version is used. `1.0.0` → `1.0.1` → `1.0.2`.
 */
export function nextBuildVersion(start: string, previous: string | null): string {
  const s = splitVersion(start);
  if (!s) return start;
  if (!previous) return start;
  const p = splitVersion(previous);
  if (!p || p.prefix !== s.prefix || p.suffix !== s.suffix) return start;
  const next = Math.max(s.number, p.number + 1);
  return `${s.prefix}${next}${s.suffix}`;
}

function splitVersion(v: string): { prefix: string; number: number; suffix: string } | null {
  const m = /^(.*?)(\d+)(\D*)$/.exec(v);
  if (!m) return null;
  const [, prefix = '', digits, suffix = ''] = m;
  return { prefix, number: Number(digits), suffix };
}
