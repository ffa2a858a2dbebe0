/** The activity log's filters as the page holds them: calendar days from the date inputs, texts, choices. */
export type ActivityFilters = {
  /** First day shown (YYYY-MM-DD, the browser's time zone); '' for no bound. */
  from: string;
  /** Last day shown, included; '' for no bound. */
  to: string;
  user: string;
  objectType: string;
  q: string;
  /** Only on the global log: a project id, '' for all. */
  projectId: string;
};

export const noFilters: ActivityFilters = {
  from: '',
  to: '',
  user: '',
  objectType: '',
  q: '',
  projectId: '',
};

/** Midnight of a calendar day (YYYY-MM-DD) in the browser's time zone, `plusDays` later. */
function localMidnight(day: string, plusDays = 0): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return null;
  const date = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + plusDays);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** The last day comes before the first: the range matches nothing, and the page says so instead of asking. */
export const rangeIsReversed = (f: ActivityFilters) => Boolean(f.from && f.to && f.to < f.from);

/**
 * The event routes' query for the filters: the days become the instants that bound them in the user's time zone
 * (`to` is the start of the day after the last one, as the server's `to` is exclusive); blank texts are left out.
 */
export function filterQuery(f: ActivityFilters): URLSearchParams {
  const params = new URLSearchParams();
  const from = localMidnight(f.from);
  const to = localMidnight(f.to, 1);
  if (from) params.set('from', from.toISOString());
  if (to) params.set('to', to.toISOString());
  if (f.user.trim()) params.set('user', f.user.trim());
  if (f.objectType) params.set('object_type', f.objectType);
  if (f.q.trim()) params.set('q', f.q.trim());
  if (f.projectId) params.set('project_id', f.projectId);
  return params;
}

/** The path of a page of events (`before`: the keyset cursor, the last id of the page before). */
export function pagePath(base: string, query: URLSearchParams, limit: number, before?: number) {
  const params = new URLSearchParams(query);
  params.set('limit', String(limit));
  if (before) params.set('before', String(before));
  return `${base}/events?${params}`;
}

/** The path of an export of everything the filters match. */
export function exportPath(base: string, query: URLSearchParams, format: 'csv' | 'json') {
  const params = new URLSearchParams(query);
  params.set('format', format);
  return `${base}/events/export?${params}`;
}
