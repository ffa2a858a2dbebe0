import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { startFirst, tiers } from './test-tiers.mjs';

// Screenshots are taken only by `npm run screenshots` (it sets this); the e2e tests assert the same screens.
const screenshots = process.env.SIGNALBOX_SCREENSHOTS === '1';
const otherDialects = Boolean(process.env.SIGNALBOX_TEST_PG_URL || process.env.SIGNALBOX_TEST_MYSQL_URL);

type Tier = keyof typeof tiers;
const files = (tier: Tier) => ({
  root: tiers[tier].root,
  include: tiers[tier].include,
  exclude: ['**/node_modules/**', ...('exclude' in tiers[tier] ? tiers[tier].exclude : [])],
});

// Server tests get the lowest bcrypt cost; the harness sets it too, this reaches the servers they spawn.
const serverEnv = { SIGNALBOX_BCRYPT_COST: '4' };
const server = { testTimeout: 60_000, hookTimeout: 60_000, pool: 'forks' } as const;
// The server files of a worker (API, system, executors) share its modules instead of each loading the whole server
// again (two thirds of the API files' time, and a third of the system files' CPU, was imports): what a file changes
// of a module (a resolver, timings, the live channel's name) it puts back when it ends.
const shared = { isolate: false } as const;

// Projects run in two groups, one after the other: the in-process tiers, then the tiers that drive real processes
// and the browser, so a browser test never waits behind a CPU-bound API file. Vitest's default of one worker less
// than the cores would run one file at a time on a 2-core machine; the files of a group mostly wait (for the
// database servers, for child processes, for the browser), so each group runs a few at once, and the second
// group's process and browser files wait side by side. The projects of one group must name the same count.
const workers = { inProcess: 3, processes: 4 } as const;
// `expect.poll` gives up after one second by default: too short on a loaded machine.
const poll = { expect: { poll: { timeout: 30_000 } } } as const;
// A browser test's waits, as long as its pages' own (WAIT_MS in e2e/support/browser.ts).
const browserPoll = { expect: { poll: { timeout: 60_000 } } } as const;
const inProcess = { maxWorkers: workers.inProcess, sequence: { groupOrder: 0 } } as const;
const processes = { maxWorkers: workers.processes, sequence: { groupOrder: 1 } } as const;
const projects: TestProjectInlineConfiguration[] = [
  { test: { name: 'unit', ...files('unit'), pool: 'threads', ...inProcess } },
  { test: { name: 'contracts', ...files('contracts'), ...inProcess } },
  { test: { name: 'web', ...files('web'), ...inProcess } },
  {
    test: {
      name: 'api',
      ...files('api'),
      ...server,
      env: { ...serverEnv, SIGNALBOX_TEST_DIALECTS: 'sqlite' },
      ...shared,
      ...inProcess,
    },
  },
  {
    test: {
      name: 'dialects',
      ...files('api'),
      // Without a PostgreSQL or MariaDB URL there is nothing to repeat the API tests on.
      include: otherDialects ? tiers.api.include : [],
      ...server,
      env: { ...serverEnv, SIGNALBOX_TEST_DIALECTS: 'postgres,mysql' },
      ...shared,
      ...inProcess,
    },
  },
  {
    test: {
      name: 'system',
      ...files('system'),
      ...server,
      ...poll,
      env: serverEnv,
      ...shared,
      // The server and CLI processes these tiers start run one bundle of the working tree, built at the start.
      globalSetup: ['./test/support/built-server.ts'],
      ...processes,
    },
  },
  {
    test: {
      name: 'executors',
      ...files('executors'),
      ...server,
      ...poll,
      env: { ...serverEnv, SIGNALBOX_TEST_DIALECTS: 'sqlite' },
      ...shared,
      globalSetup: ['./test/support/built-server.ts'],
      ...processes,
    },
  },
  {
    test: {
      name: 'e2e',
      ...files('e2e'),
      // One server for the files that can share it; first-day.test.ts (a fresh install), tasks.test.ts and templates.test.ts start
      // their own. Every server runs the bundle built at the start of the run.
      globalSetup: ['../packages/server/test/support/built-server.ts', './support/shared-server.ts'],
      // The longest flows (a survey of every type built, asked and run; a workflow built by mouse, run and
      // approved) take 90-120 s on a slow, busy machine; each of their waits has its own 60 s bound.
      testTimeout: 240_000,
      hookTimeout: 120_000,
      pool: 'forks',
      ...browserPoll,
      ...processes,
    },
  },
];
if (screenshots) {
  projects.push({
    test: {
      name: 'screenshots',
      ...files('screenshots'),
      testTimeout: 120_000,
      hookTimeout: 120_000,
      pool: 'forks',
      ...poll,
      fileParallelism: false,
      sequence: { groupOrder: 3 },
    },
  });
}

const root = fileURLToPath(new URL('.', import.meta.url));
const waitsLong = (spec: TestSpecification) => startFirst.some((path) => spec.moduleId === `${root}${path}`);

/**
 * Vitest's order (group, project, then longest or largest first), with the long files of a group first: the
 * projects of a group share its workers and run in name order, so a long `system` file started first only within
 * its project would wait for every `executors` file to start.
 */
const groupOf = (spec: TestSpecification | undefined) => spec?.project.config.sequence.groupOrder;
class LongWaitsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]) {
    const sorted = await super.sort(files);
    const out: TestSpecification[] = [];
    for (let start = 0; start < sorted.length; ) {
      let end = start;
      while (end < sorted.length && groupOf(sorted[end]) === groupOf(sorted[start])) end++;
      const block = sorted.slice(start, end);
      out.push(...block.filter(waitsLong), ...block.filter((spec) => !waitsLong(spec)));
      start = end;
    }
    return out;
  }
}

// `SIGNALBOX_TEST_TIMINGS=file.json` also writes every file's start and duration (scripts/test-timings.mjs reads it).
const timings = process.env.SIGNALBOX_TEST_TIMINGS;

export default defineConfig({
  test: {
    passWithNoTests: true,
    projects,
    sequence: { sequencer: LongWaitsFirst },
    ...(timings ? { reporters: ['default', 'json'], outputFile: { json: timings } } : {}),
  },
});
