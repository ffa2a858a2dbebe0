#!/usr/bin/env node
// Where a test run's time went, from the JSON that `SIGNALBOX_TEST_TIMINGS=file.json npm test` writes: files whose
// test times overlap, run by run, with each run's wall time and its longest files. The JSON names no vitest project
// and times tests only (not imports or set-up), so a tier can show as several runs split at its quiet gaps.
//   node scripts/test-timings.mjs file.json [--top 15]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/test-timings.mjs results.json [--top N]');
  process.exit(2);
}
const top = Number(rest[rest.indexOf('--top') + 1]) || 15;
const run = JSON.parse(readFileSync(file, 'utf8'));
const root = process.cwd();

const files = run.testResults.map((r) => {
  const durations = r.assertionResults.map((a) => a.duration ?? 0);
  return {
    name: relative(root, r.name),
    start: r.startTime,
    end: r.endTime ?? r.startTime + durations.reduce((a, b) => a + b, 0),
    tests: r.assertionResults.length,
    failed: r.assertionResults.filter((a) => a.status === 'failed').length,
  };
});
files.sort((a, b) => a.start - b.start);

// Files that overlap in time make one run; a gap of over 2 s between them starts the next.
const groups = [];
for (const f of files) {
  const g = groups.at(-1);
  if (g && f.start <= g.end + 2000) {
    g.files.push(f);
    g.end = Math.max(g.end, f.end);
  } else groups.push({ start: f.start, end: f.end, files: [f] });
}
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
console.log(`${files.length} files, ${run.numTotalTests} tests, ${run.numFailedTests} failed`);
for (const g of groups) {
  const busy = g.files.reduce((a, f) => a + (f.end - f.start), 0);
  console.log(`\nrun of ${g.files.length} files: wall ${s(g.end - g.start)}, file time ${s(busy)}`);
  for (const f of [...g.files].sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, top))
    console.log(
      `  ${s(f.end - f.start).padStart(8)}  ${f.name} (${f.tests})${f.failed ? ` ${f.failed} failed` : ''}`,
    );
}
