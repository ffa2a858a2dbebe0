// Types only: the configuration and the database are loaded once a command needs them (the client commands
// need neither, and start faster without them).
import type { Config } from './config';
import type { openDb } from './db';

const usage = `Usage: signalbox <command>

Commands:
  server                      run the web console (applies migrations first)
  migrate                     apply database migrations
  user add --login L --name N --email E --password P [--admin]
  user list
  user change-by-login --login L [--password P] [--name N] [--email E]
  user delete --login L
  user unlock --login L       clear the user's sign-in lock after repeated failed passwords
  user totp disable --login L reset the user's two-factor sign-in (TOTP) and its recovery codes
  secret-key rotate [--new-key-file F | --write-new-key F]
                              re-encrypt every stored secret under a new secret key (servers stopped; see
                              "signalbox secret-key help")
  backup --file F             write every user (no passwords) and project to F
  restore --file F            restore such a file into an instance without projects
  runner register|start|unregister …
                              run tasks of a server on this machine (see "signalbox runner help")

Client commands (a server's REST API with an API token; "signalbox <command> --help" for each):
`;

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // The client commands talk to a server: they need none of its configuration (loaded on demand).
  const client = await import('./cli/client');
  if (command && client.clientCommandNames.has(command)) {
    process.exitCode = await client.runClientCommand(command, rest);
    return;
  }
  const { ConfigError, loadConfig } = await import('./config');
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  switch (command) {
    case 'server':
    case 'service':
      return serve(config);
    case 'migrate': {
      const { migrate, openDb } = await import('./db');
      const handle = openDb(config.dbUrl);
      const applied = await migrate(handle);
      console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Database is up to date');
      await handle.destroy();
      return;
    }
    case 'user':
    case 'users':
      return withMigratedDb(config, async (handle) => {
        // Loaded on demand: `user …` commands should not pay for loading the whole web app.
        const { runUserCommand } = await import('./features/users/users.cli');
        return runUserCommand(handle, rest);
      });
    case 'secret-key':
      return withMigratedDb(config, async (handle) => {
        const { runSecretKeyCommand } = await import('./features/secret-key/secret-key.cli');
        return runSecretKeyCommand({ config, ...handle }, rest);
      });
    case 'backup':
    case 'restore':
      return withMigratedDb(config, async (handle) => {
        const { runInstanceBackupCommand } = await import('./features/instance-backup/instance-backup.cli');
        return runInstanceBackupCommand(command, { config, ...handle }, rest);
      });
    case 'runner': {
      // Loaded on demand; a runner needs no database.
      const { runRunnerCommand } = await import('./runners/client/cli');
      process.exitCode = await runRunnerCommand(config, rest);
      // Nothing of a finished runner command is left to wait for (sockets, timers of ended tasks).
      process.exit();
      return;
    }
    default:
      console.log(`${usage}${client.clientUsage()}\n`);
      process.exitCode = command && command !== 'help' && command !== '--help' ? 1 : 0;
  }
}

/**
 * Runs a command on the migrated database with the configured password-hash cost, sets its exit code and closes
 * the database however the command ends.
 */
async function withMigratedDb(
  config: Config,
  command: (handle: ReturnType<typeof openDb>) => Promise<number>,
) {
  const { migrate, openDb } = await import('./db');
  const handle = openDb(config.dbUrl);
  try {
    await migrate(handle);
    (await import('./lib/password-hash')).setPasswordHashCost(config.bcryptCost);
    // The events a command writes are forwarded like the server's (a few seconds are given to send them).
    const forwarder = await cliAuditForwarder(config, handle);
    try {
      process.exitCode = await command(forwarder ? { ...handle, db: forwarder.db } : handle);
    } finally {
      await forwarder?.close();
    }
  } finally {
    await handle.destroy();
  }
}

/** The audit forwarder of a command, when one is configured; its warnings go to stderr. */
async function cliAuditForwarder(config: Config, handle: ReturnType<typeof openDb>) {
  if (!config.auditWebhookUrl && !config.auditSyslog) return null;
  const { createAuditForwarder, withAuditForwarding } = await import('./audit/forward');
  const { pino } = await import('pino');
  const log = pino({ level: 'warn' }, pino.destination(2));
  const forwarder = createAuditForwarder(config, { ...handle, log });
  return forwarder && { db: withAuditForwarding(handle.db, forwarder), close: () => forwarder.close() };
}

async function serve(config: Config) {
  const { buildApp } = await import('./app');
  const { ensureAdmin } = await import('./features/users/users.service');
  const { SecretKeyMismatchError } = await import('./db/options');
  const { SecretKeyRotationUnfinishedError } = await import('./lib/crypto');
  const built = await buildApp(config).catch((err: unknown) => {
    if (!(err instanceof SecretKeyMismatchError || err instanceof SecretKeyRotationUnfinishedError))
      throw err;
    console.error(`Signalbox cannot start: ${err.message}`);
    process.exit(1);
  });
  const { app, deps } = built;
  const created = await ensureAdmin(deps.db, deps.dialect, {
    login: config.adminLogin,
    password: config.adminPassword,
    email: config.adminEmail,
    name: config.adminName,
  });
  let shuttingDown = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // Once per signal: the same signal again ends the process at once (the next start ends what is left).
    process.once(signal, async () => {
      if (shuttingDown) {
        app.log.warn({ signal }, 'already shutting down (the same signal again stops at once)');
        return;
      }
      shuttingDown = true;
      const began = Date.now();
      app.log.info({ signal, graceSeconds: config.shutdownGrace }, 'shutting down');
      try {
        // No task is claimed from now on; running ones get the grace period, then are interrupted. Meanwhile
        // app.close() answers new requests 503, closes the live sockets with the shutdown reason, waits for the
        // drain (in the task engine's close), then closes the database.
        const drained = deps.tasks.drain(config.shutdownGrace * 1000);
        await app.close();
        await drained;
      } catch (err) {
        app.log.error({ err }, 'shutting down failed');
        process.exit(1);
      }
      app.log.info({ ms: Date.now() - began }, 'shut down');
      process.exit(0);
    });
  }
  try {
    // Everything is loaded and compiled: the heap is compacted once, before a request can arrive.
    await app.ready();
    (await import('./lib/compact-heap')).compactHeap();
    await app.listen({ port: config.port, host: config.host });
    // Printed to the console only (never to the structured log), the password once: with JSON log lines on stdout
    // (a log shipper reads them) it goes to stderr, so stdout stays one JSON object per line.
    const { startBanner, firstAdminLogin } = await import('./start-banner');
    const { chosenLogFormat } = await import('./http/logging');
    const print = chosenLogFormat(config.logFormat) === 'json' ? console.error : console.log;
    print(
      startBanner({
        config,
        address: app.server.address(),
        created,
        adminLogin: created ? created.login : await firstAdminLogin(deps.db),
      }),
    );
  } catch (err) {
    // Reasons a start is refused are said in one line, not a stack trace.
    const { InstanceInUseError } = await import('./tasks/engine');
    const known = err instanceof InstanceInUseError || (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
    if (!known) throw err;
    console.error(`Signalbox cannot start: ${(err as Error).message}`);
    await app.close().catch(() => {});
    process.exit(1);
  }
}
