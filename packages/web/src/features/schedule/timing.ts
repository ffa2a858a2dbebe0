/** The timing selector of the schedule form: a cron built from checked values. */
export const timings = ['yearly', 'monthly', 'weekly', 'daily', 'hourly'] as const;
export type Timing = (typeof timings)[number];

export type TimingState = {
  timing: Timing;
  minutes: number[];
  hours: number[];
  days: number[];
  months: number[];
  weekdays: number[];
};

export const ranges = {
  minutes: Array.from({ length: 12 }, (_, i) => i * 5),
  hours: Array.from({ length: 24 }, (_, i) => i),
  days: Array.from({ length: 31 }, (_, i) => i + 1),
  months: Array.from({ length: 12 }, (_, i) => i + 1),
  weekdays: Array.from({ length: 7 }, (_, i) => i),
};

/** Which value groups each timing shows. */
export const groupsFor: Record<Timing, (keyof typeof ranges)[]> = {
  yearly: ['months', 'days', 'hours', 'minutes'],
  monthly: ['days', 'hours', 'minutes'],
  weekly: ['weekdays', 'hours', 'minutes'],
  daily: ['hours', 'minutes'],
  hourly: ['minutes'],
};

const part = (values: number[], fallback: string) =>
  values.length === 0 ? fallback : [...values].sort((a, b) => a - b).join(',');

export function toCron(s: TimingState): string {
  const groups = groupsFor[s.timing];
  const minute = part(s.minutes, '0');
  const hour = groups.includes('hours') ? part(s.hours, '0') : '*';
  const day = groups.includes('days') ? part(s.days, '1') : '*';
  const month = groups.includes('months') ? part(s.months, '1') : '*';
  const weekday = groups.includes('weekdays') ? part(s.weekdays, '0') : '*';
  return `${minute} ${hour} ${day} ${month} ${weekday}`;
}

const parseField = (text: string | undefined): number[] | null => {
  if (!text || text === '*') return [];
  if (!/^\d+(,\d+)*$/.test(text)) return null;
  return text.split(',').map(Number);
};

/** Reads a cron back into the selector when it is one the selector could have built; else null. */
export function fromCron(cron: string): TimingState | null {
  const f = cron.trim().split(/\s+/);
  if (f.length !== 5) return null;
  const [mi, h, d, mo, w] = f.map(parseField);
  if (!mi || !h || !d || !mo || !w) return null;
  if (mi.some((m) => m % 5 !== 0)) return null;
  const timing: Timing =
    f[3] !== '*'
      ? 'yearly'
      : f[2] !== '*'
        ? 'monthly'
        : f[4] !== '*'
          ? 'weekly'
          : f[1] !== '*'
            ? 'daily'
            : 'hourly';
  if (f[0] === '*') return null;
  return { timing, minutes: mi, hours: h, days: d, months: mo, weekdays: w };
}
