/** The timing selector of the schedule form: a cron built from checked values. */
export const timings = ['yearly', 'monthly', 'weekly', 'daily', 'hourly', 'minutely'] as const;
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
  minutely: [],
};

const part = (values: number[], fallback: string) =>
  values.length === 0 ? fallback : [...values].sort((a, b) => a - b).join(',');

export function toCron(s: TimingState): string {
  const groups = groupsFor[s.timing];
  if (s.timing === 'minutely') return '* * * * *';
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

const groupOrder: (keyof typeof ranges)[] = ['minutes', 'hours', 'days', 'months', 'weekdays'];

/**
 * Reads a cron back into the selector when the selector shows exactly that cron (building it again gives the same
 * schedule); else null, and the form says the simple panel cannot express it.
 */
export function fromCron(cron: string): TimingState | null {
  const f = cron.trim().split(/\s+/);
  if (f.length !== 5) return null;
  const [mi, h, d, mo, w] = f.map(parseField);
  if (!mi || !h || !d || !mo || !w) return null;
  if (f.every((x) => x === '*'))
    return { timing: 'minutely', minutes: [], hours: [], days: [], months: [], weekdays: [] };
  if (f[0] === '*') return null;
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
  const state: TimingState = { timing, minutes: mi, hours: h, days: d, months: mo, weekdays: w };
  // Every value must be one the selector offers, without repeats.
  for (const group of groupOrder) {
    const values = state[group];
    if (new Set(values).size !== values.length || values.some((v) => !ranges[group].includes(v))) return null;
  }
  const normal = f.map((x) => (x === '*' ? x : part(parseField(x) ?? [], x))).join(' ');
  return toCron(state) === normal ? state : null;
}
