// The test tiers: which test files each vitest project runs. vitest.config.ts builds its projects from this
// list and scripts/test-tiers.test.ts checks that every test file in the repository is in exactly one tier.
// Paths are relative to each tier's root.

/** Server tests that do no I/O: pure functions over their input. */
const serverUnit = [
  'src/db/unavailable.test.ts',
  'src/features/integrations/webhook.match.test.ts',
  'src/features/auth/ldap.directory.test.ts',
  'src/tasks/queue/admission.test.ts',
  'src/tasks/queue/placement.test.ts',
  'src/tasks/sandbox/proc-table.test.ts',
  'src/tasks/sandbox/confinement-args.test.ts',
  'src/lib/apps.test.ts',
  'src/lib/crypto.test.ts',
  'src/lib/kept.test.ts',
  'src/lib/compact-heap.test.ts',
  'src/runner-protocol/seal.test.ts',
  'src/runner-protocol/protocol.test.ts',
  'src/lib/errors.test.ts',
  'src/runners/client/output.test.ts',
  'src/tasks/output/output-rows.test.ts',
  'src/runners/server/inbox.test.ts',
  'src/tasks/executors/terraform-plan.test.ts',
  'src/tasks/executors/terraform-drift.test.ts',
  'src/features/terraform-states/state-diff.test.ts',
  'src/features/mcp/mcp-rate-limit.test.ts',
  // The client commands' pure parts: --var answers, terminal-safe log lines, URLs and tokens.
  'src/cli/run-vars.test.ts',
  'src/cli/terminal.test.ts',
  // The deploy files (Dockerfile, compose file, systemd unit, .env.example), read and checked against the code.
  'test/deploy/compose.test.ts',
  'test/deploy/dockerfile.test.ts',
  'test/deploy/settings-docs.test.ts',
  'test/deploy/systemd-unit.test.ts',
  // The built server's stack traces, mapped to the TypeScript sources (a tiny bundle made by esbuild).
  'test/build/stack-traces.test.ts',
];

/**
 * Server tests that drive the real machine: task runs (Bash, ansible-playbook, the terraform/tofu/pulumi
 * stand-ins, git over ssh and http), server processes that start, stop and restart, process isolation,
 * Redis, and database outages.
 */
const serverSystem = [
  'src/tasks/**/*.test.ts',
  // A workflow run across SIGKILLed and restarted server processes (bash and ansible-playbook nodes).
  'src/features/workflows/workflow-restart.process.test.ts',
  // Two server processes on PostgreSQL/MariaDB and Redis advancing the same workflow runs.
  'src/features/workflows/workflow-cluster.process.test.ts',
  // The server's side of remote runners: real sockets, task runs and database rows.
  'src/runners/server/remote-runners.test.ts',
  'src/runners/server/output.test.ts',
  'src/runners/server/stored-plans.test.ts',
  'src/config.test.ts',
  'src/server-shutdown.test.ts',
  'src/log-format.test.ts',
  'src/terminal-start.test.ts',
  'src/npm-start.test.ts',
  'test/deploy/docker-build.test.ts',
  'src/db/pool.test.ts',
  'src/db/secret-key.process.test.ts',
  'src/features/secret-key/secret-key.process.test.ts',
  'src/features/projects/demo.test.ts',
  'src/features/users/users.cli.test.ts',
  'src/features/users/totp-reset.cli.test.ts',
  'src/live/redis.test.ts',
  'src/live/redis-deployments.test.ts',
  'src/features/live/revocation.redis.test.ts',
  'src/http/rate-limit.redis.test.ts',
  'src/scheduler/scheduler.db-outage.test.ts',
  'src/features/health/health.db-outage.test.ts',
  // Waits for real minute boundaries of the wall clock.
  'src/scheduler/scheduler.realtime.test.ts',
  // LDAP sign-in against a real slapd (plain, StartTLS, LDAPS).
  'src/features/auth/ldap.test.ts',
  // Audit receivers on loopback sockets that are down, slow or back, and the signalbox command.
  'src/audit/forward.test.ts',
  // `signalbox login`, `run --follow` and the other client commands against a server process.
  'src/cli/client.process.test.ts',
  // `signalbox runner` processes against a stand-in server: registration, jobs, reconnects, stops, secrets.
  'src/runners/client/runner-client.test.ts',
  // A runner's start in its folder: the repository caches of an earlier registration removed.
  'src/runners/client/runner-caches.test.ts',
];

/**
 * System tests whose subject is a task executor and the real tool it drives (ansible-playbook, git over ssh and
 * http, the terraform/tofu/pulumi stand-ins), not the database: they run on SQLite only. The task engine, queue,
 * output, retention, restarts and outages stay in `system`, which repeats them on every configured database.
 */
const serverExecutors = [
  'src/tasks/ansible.test.ts',
  'src/tasks/ansible-unsafe-vars.test.ts',
  'src/tasks/ansible-vaults.test.ts',
  'src/tasks/executor-paths.test.ts',
  'src/tasks/run/git-remote.test.ts',
  'src/tasks/run/git-transports.test.ts',
  'src/tasks/playbook-override.test.ts',
  'src/tasks/terraform.test.ts',
  'src/tasks/python.test.ts',
  'src/tasks/powershell.test.ts',
  'src/tasks/terragrunt.test.ts',
  'src/tasks/terraform-state-backend.test.ts',
];

const serverApi = {
  include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  exclude: [...serverUnit, ...serverSystem, ...serverExecutors],
};

/**
 * Every tier, by vitest project name. The `dialects` project repeats the `api` files on PostgreSQL and MariaDB;
 * `screenshots` runs only under `npm run screenshots`.
 */
export const tiers = {
  unit: { root: '.', include: [...serverUnit.map((path) => `packages/server/${path}`), 'scripts/*.test.ts'] },
  contracts: { root: 'packages/contracts', include: ['src/**/*.test.ts'] },
  web: { root: 'packages/web', include: ['src/**/*.test.ts'] },
  api: { root: 'packages/server', ...serverApi },
  system: { root: 'packages/server', include: serverSystem, exclude: [...serverUnit, ...serverExecutors] },
  executors: { root: 'packages/server', include: serverExecutors },
  e2e: { root: 'e2e', include: ['**/*.test.ts'], exclude: ['screenshots.test.ts'] },
  screenshots: { root: 'e2e', include: ['screenshots.test.ts'] },
};

/**
 * Files that take longest in their tier, whether they mostly wait (for the wall clock's next minute, for processes
 * to start and stop) or walk the whole API: started first within their tier so they overlap the other files
 * instead of trailing at the end of the run with the other workers idle. A fresh clone has no timings of earlier
 * runs, and vitest then starts the largest files first, which these are not.
 */
export const startFirst = [
  'packages/server/src/scheduler/scheduler.realtime.test.ts',
  'packages/server/src/features/users/users.cli.test.ts',
  'packages/server/src/tasks/queue/instances.test.ts',
  // The longest process files after those (runner processes connecting, CLI commands one process each): behind
  // the browser files they ran last, with the other workers idle.
  'packages/server/src/runners/client/runner-client.test.ts',
  'packages/server/src/cli/client.process.test.ts',
  // The API and dialects tiers: the route walks (a few thousand requests per database), and the files that make
  // an app and a database for every test.
  'packages/server/test/api-robustness.test.ts',
  'packages/server/test/swagger-conformance.test.ts',
  'packages/server/src/alerts/alerts.test.ts',
  'packages/server/src/scheduler/scheduler.test.ts',
];
