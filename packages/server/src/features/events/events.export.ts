import type { EventExportFormat, EventView } from '@signalbox/contracts';

/** The columns of a CSV export, in order (the fields of an event as the API lists it). */
export const CSV_COLUMNS = [
  'id',
  'created',
  'project_id',
  'project_name',
  'user_id',
  'username',
  'user_name',
  'object_type',
  'object_id',
  'description',
] as const satisfies readonly (keyof EventView)[];

/**
 * What a spreadsheet takes for a formula (or a DDE command) when a cell starts with it: such a cell gets a leading
 * `'`, so a description like `=HYPERLINK(…)` opens as the text it is (OWASP's CSV injection advice).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV cell (RFC 4180): quoted when it holds a quote, comma or line break; text never read as a formula. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvRow = (cells: readonly (string | number | null)[]) => `${cells.map(csvCell).join(',')}\r\n`;

const mediaTypes: Record<EventExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

export const exportMediaType = (format: EventExportFormat) => mediaTypes[format];

/** `signalbox-events[-project-3]-2025-03-01.csv`: what the log is of, and the day it was exported (UTC). */
export function exportFileName(format: EventExportFormat, projectId: number | null, at = new Date()) {
  const of = projectId === null ? '' : `-project-${projectId}`;
  return `signalbox-events${of}-${at.toISOString().slice(0, 10)}.${format}`;
}

/**
 * The export as text chunks, one per batch of events: CSV (a UTF-8 byte order mark so spreadsheets read the
 * names right, a header row, CRLF rows), a JSON array with one event per line, or JSON lines.
 */
export async function* exportChunks(
  format: EventExportFormat,
  batches: AsyncIterable<EventView[]>,
): AsyncGenerator<string> {
  if (format === 'csv') yield `\uFEFF${csvRow(CSV_COLUMNS)}`;
  if (format === 'json') yield '[';
  let first = true;
  for await (const batch of batches) {
    if (format === 'csv') {
      yield batch.map((event) => csvRow(CSV_COLUMNS.map((column) => event[column]))).join('');
    } else if (format === 'jsonl') {
      yield batch.map((event) => `${JSON.stringify(event)}\n`).join('');
    } else {
      yield batch.map((event, i) => `${first && i === 0 ? '\n' : ',\n'}${JSON.stringify(event)}`).join('');
      first = false;
    }
  }
  if (format === 'json') yield '\n]\n';
}
