import i18next from 'i18next';

type Style = 'dateTime' | 'shortDate' | 'shortTime';

const STYLES: Record<Style, Intl.DateTimeFormatOptions> = {
  dateTime: { dateStyle: 'medium', timeStyle: 'medium' },
  shortDate: { dateStyle: 'short' },
  shortTime: { timeStyle: 'short' },
};

/**
 * One formatter per language and style, made once: `toLocaleString` and its kin build a new Intl.DateTimeFormat on
 * every call (locale data, patterns), which made dates most of the work of drawing a list of a few hundred rows.
 * Each formats as the `toLocale…String` call with the same language and options would.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(style: Style): Intl.DateTimeFormat {
  const language = i18next.language === 'en' ? undefined : i18next.language;
  const key = `${language ?? ''}|${style}`;
  let format = formatters.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(language, STYLES[style]);
    formatters.set(key, format);
  }
  return format;
}

export function formatDateTime(value: string | null | undefined): string {
  if (!value) return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '—';
  return formatter('dateTime').format(date);
}

/** A short date and a short time (no seconds) in the reader's language, apart, for narrow columns; null if none. */
export function shortDateAndTime(value: string | null | undefined): [date: string, time: string] | null {
  if (!value) return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return null;
  return [formatter('shortDate').format(date), formatter('shortTime').format(date)];
}

/** Duration between two times as h:mm:ss (or m:ss); a running task counts up to `now`. */
export function formatDuration(
  start: string | null | undefined,
  end: string | null | undefined,
  now = Date.now(),
) {
  if (!start) return '—';
  const from = new Date(start).getTime();
  const to = end ? new Date(end).getTime() : now;
  if (Number.isNaN(from) || Number.isNaN(to)) return '—';
  const total = Math.max(0, Math.round((to - from) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}
