import { format } from 'mysql2';
import { describe, expect, it } from 'vitest';
import {
  cutMarker,
  type OutputRow,
  ROWS_PER_STATEMENT,
  rowBytes,
  STATEMENT_BYTES,
  statementChunks,
  statementLimits,
} from './output-rows';

const row = (output: string): OutputRow => ({ task_id: 12345, time: '2026-11-28T13:17:25.123Z', output });
const insertText = 'insert into `task_output` (`task_id`, `time`, `output`) values ';
/** The bytes of the statement MariaDB receives for `rows` (mysql2 escapes values into the SQL text). */
const sentBytes = (rows: OutputRow[]) =>
  Buffer.byteLength(
    format(
      insertText + rows.map(() => '(?, ?, ?)').join(', '),
      rows.flatMap((r) => [r.task_id, r.time, r.output]),
    ),
  );
const boundOf = (rows: OutputRow[]) => rows.reduce((sum, r) => sum + rowBytes(r), 0);

describe('output rows grouped into insert statements', () => {
  it('keeps short lines at most ROWS_PER_STATEMENT to a statement, in order', () => {
    const rows = Array.from({ length: ROWS_PER_STATEMENT * 2 + 7 }, (_, i) => row(`line ${i}`));
    const chunks = statementChunks(rows, statementLimits());
    expect(chunks.map((c) => c.length)).toEqual([ROWS_PER_STATEMENT, ROWS_PER_STATEMENT, 7]);
    expect(chunks.flat()).toEqual(rows);
  });

  it('keeps long lines under the statement bytes, a longer one alone', () => {
    const mib = 'm'.repeat(1024 * 1024);
    const rows = [row('short'), row(mib), row(mib), row('x'.repeat(STATEMENT_BYTES)), row('tail')];
    const chunks = statementChunks(rows, statementLimits());
    for (const chunk of chunks)
      if (chunk.length > 1) expect(boundOf(chunk)).toBeLessThanOrEqual(STATEMENT_BYTES);
    expect(chunks.flat()).toEqual(rows);
    expect(chunks.find((c) => c.includes(rows[3] as OutputRow))).toHaveLength(1);
  });

  it('bounds what MariaDB receives, for the characters its escaping and UTF-8 make longest', () => {
    const nasty = [
      '\'"\\\u0000\b\t\r\u001a'.repeat(1000),
      '€漢字'.repeat(1000),
      '😀'.repeat(1000),
      'plain ascii text'.repeat(100),
    ].map(row);
    for (const r of nasty) expect(sentBytes([r]) - insertText.length).toBeLessThanOrEqual(rowBytes(r));
    const packet = 64 * 1024;
    const limits = statementLimits(packet);
    const many = Array.from({ length: 200 }, (_, i) => row(nasty[i % nasty.length]?.output ?? ''));
    for (const chunk of statementChunks(many, limits)) expect(sentBytes(chunk)).toBeLessThan(packet);
  });

  it('cuts a line too long for max_allowed_packet even alone, with a marker naming what is missing', () => {
    const packet = 1024 * 1024;
    const limits = statementLimits(packet);
    const long = row('😀'.repeat(600_000));
    const [chunk] = statementChunks([long], limits);
    expect(chunk).toEqual([long]);
    expect(sentBytes([long])).toBeLessThan(packet);
    const marker = /\[line cut: (\d+) more characters do not fit/.exec(long.output);
    expect(marker).not.toBeNull();
    const kept = long.output.slice(0, long.output.indexOf(cutMarker(Number(marker?.[1]))));
    expect(kept.length + Number(marker?.[1])).toBe(1_200_000);
    // Never half of a surrogate pair.
    expect(kept).toBe('😀'.repeat(kept.length / 2));
  });

  it('sets no row limit where the database has no packet limit', () => {
    expect(statementLimits()).toEqual({
      statementBytes: STATEMENT_BYTES,
      rowBytes: Number.POSITIVE_INFINITY,
    });
    expect(statementLimits(16 * 1024 * 1024).statementBytes).toBe(STATEMENT_BYTES);
    const line = 'z'.repeat(2_000_000);
    const [chunk] = statementChunks([row(line)], statementLimits());
    expect(chunk?.[0]?.output).toBe(line);
  });
});
