/** Run-once times in the schedule form: the browser's local date and time in, UTC (ISO 8601) out. */

const pad = (n: number) => String(n).padStart(2, '0');

/** The value of an `<input type="datetime-local">` (YYYY-MM-DDTHH:mm, local time) for an ISO time; '' for none. */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The UTC ISO time of a datetime-local value, read in the browser's time zone; null when empty or not a time. */
export function fromLocalInput(local: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(y, mo - 1, d, h, mi, s);
  // Reject what Date rolls over (Feb 30 becomes Mar 2).
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d) return null;
  return date.toISOString();
}

/** A first suggestion for a new run-once schedule: the next whole hour. */
export function nextWholeHour(now = new Date()): string {
  const d = new Date(now);
  d.setMinutes(0, 0, 0);
  d.setHours(d.getHours() + 1);
  return d.toISOString();
}

/** The browser's time zone name (e.g. Europe/Berlin), shown next to the local time it reads. */
export const browserTimeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;
