import { Api } from './api';
import { type ClientCommand, parseCommandLine } from './command';
import { projects, templates } from './commands/lists';
import { login, logout } from './commands/login';
import { run } from './commands/run';
import { approve, reject, stop, task } from './commands/tasks';
import { loadCredentials } from './credentials';
import { ClientError, UsageError } from './errors';
import { Terminal } from './terminal';

/**
 * The remote client commands of `signalbox`: they talk to a server over its REST API with an API token (see
 * `signalbox login`), print JSON with --json, and report a failure as one line on stderr.
 */
const commands: readonly ClientCommand[] = [
  login,
  logout,
  projects,
  templates,
  run,
  task,
  stop,
  approve,
  reject,
];

export const clientCommandNames: ReadonlySet<string> = new Set(commands.map((c) => c.name));

/** The client commands' lines of the top-level help. */
export function clientUsage(): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`).join('\n');
}

/** Runs a client command; answers its exit code (0 done, 1 failed, 2 a followed task was stopped). */
export async function runClientCommand(name: string, argv: string[]): Promise<number> {
  const command = commands.find((c) => c.name === name);
  if (!command) throw new Error(`no client command ${name}`);
  let term: Terminal | null = null;
  try {
    const { values, args } = parseCommandLine(command, argv);
    if (values.help) {
      process.stdout.write(`${command.help}\n`);
      return 0;
    }
    term = new Terminal(values.json === true);
    let api: Api | null = null;
    return await command.run({
      values,
      args,
      term,
      api: () => {
        api ??= new Api(loadCredentials());
        return api;
      },
    });
  } catch (err) {
    term?.stopSpinning();
    // Anything else (a file that cannot be written, …) is said in one line too.
    const message = (err as Error).message.split('\n')[0];
    const hint = err instanceof UsageError ? ` (signalbox ${name} --help)` : '';
    process.stderr.write(`signalbox ${name}: ${message}${hint}\n`);
    return err instanceof ClientError ? err.exitCode : 1;
  }
}
