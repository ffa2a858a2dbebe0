import { parseArgs } from 'node:util';
import type { Config } from '../../config';
import { installRoot } from '../../paths';
import { resolveConfinement } from '../../tasks/sandbox/confinement';
import { loadRunner, RunnerFilesError, runnerDir } from './files';
import { RunnerCommandError, registerRunner, unregisterRunner } from './register';
import { RunnerProcess } from './runner';
import { lockRunnerDir, RunnerBusyError, runnerProcessIn } from './runner-dir';

export const runnerUsage = `Usage: signalbox runner <command>

Commands:
  register --url URL --registration-token=T [--name N] [--tag X]... [--max-parallel N] [--project P] [--dir D]
                   register this machine as a runner of the server at URL (the token may instead come from
                   SIGNALBOX_RUNNER_REGISTRATION_TOKEN, which keeps it out of the process list; a token that
                   starts with "-" needs the "=" form or the variable)
  start [--dir D]  connect to the server and run the tasks it gives this runner. SIGTERM drains: no new tasks,
                   the running ones may finish for SIGNALBOX_RUNNER_DRAIN_TIMEOUT seconds (default 600), then
                   they are stopped; SIGINT, or a second SIGTERM, stops them at once
  unregister [--dir D] [--force]
                   make the server forget this runner, then remove its files (--force: remove them even when
                   the server cannot be reached or no longer knows the runner)

The runner folder is --dir, else SIGNALBOX_RUNNER_DIR, else ~/.signalbox-runner.
`;

function log(line: string) {
  console.log(`${new Date().toISOString()} ${line}`);
}

function fail(message: string): number {
  console.error(message);
  return 1;
}

function positiveInt(text: string | undefined, flag: string, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max)
    throw new RunnerCommandError(`${flag} must be a whole number from 1 to ${max}`);
  return Number(text);
}

/** `signalbox runner …`; returns the exit code. */
export async function runRunnerCommand(config: Config, argv: string[]): Promise<number> {
  const [sub, ...args] = argv;
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        url: { type: 'string' },
        'registration-token': { type: 'string' },
        name: { type: 'string' },
        tag: { type: 'string', multiple: true },
        'max-parallel': { type: 'string' },
        project: { type: 'string' },
        dir: { type: 'string' },
        force: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (err) {
    return fail(`${(err as Error).message}\n\n${runnerUsage}`);
  }
  const dir = runnerDir(values.dir as string | undefined);
  try {
    switch (sub) {
      case 'register': {
        const url = values.url as string | undefined;
        if (!url) return fail('--url is required (the server, e.g. https://signalbox.example.com)');
        const token =
          (values['registration-token'] as string | undefined) ||
          process.env.SIGNALBOX_RUNNER_REGISTRATION_TOKEN;
        if (!token) return fail('--registration-token (or SIGNALBOX_RUNNER_REGISTRATION_TOKEN) is required');
        const tags = ((values.tag as string[] | undefined) ?? []).map((t) => t.trim()).filter(Boolean);
        const settings = await registerRunner({
          dir,
          url,
          registrationToken: token,
          name: (values.name as string | undefined)?.trim() || undefined,
          tags,
          maxParallel: positiveInt(values['max-parallel'] as string | undefined, '--max-parallel', 1000) ?? 1,
          projectId: positiveInt(values.project as string | undefined, '--project', 2 ** 31 - 1),
        });
        console.log(`Registered runner ${settings.id} with ${settings.url}; its settings are in ${dir}`);
        console.log(`Start it with: signalbox runner start${values.dir ? ` --dir ${dir}` : ''}`);
        return 0;
      }
      case 'unregister': {
        const running = runnerProcessIn(dir);
        if (running) return fail(`The runner is running in ${dir} (pid ${running}): stop it first`);
        const settings = await unregisterRunner(dir, values.force === true);
        console.log(
          `Unregistered runner ${settings.id} from ${settings.url} and removed its files from ${dir}`,
        );
        return 0;
      }
      case 'start': {
        const { settings, privateKey } = loadRunner(dir);
        const unlock = lockRunnerDir(dir);
        // The runner's folder (its key, its token) and install are as hidden from its tasks as the server's are.
        const confinement = resolveConfinement({
          setting: config.taskSandbox,
          bwrap: config.taskSandboxBwrap,
          hidden: [dir, installRoot],
          paths: config.taskSandboxPaths,
          user: config.taskUser,
        });
        if (confinement.mode === 'bwrap') log('Task sandbox: bwrap');
        else if (confinement.mode === 'refused') log(`Task sandbox: ${confinement.reason}; tasks will fail`);
        else
          log(
            confinement.reason
              ? `TASK SANDBOX IS OFF: ${confinement.reason}. Tasks run with the runner's rights and can read its key and token. Install bubblewrap or set SIGNALBOX_TASK_SANDBOX=off to accept this`
              : 'Task sandbox: off (SIGNALBOX_TASK_SANDBOX=off)',
          );
        const runner = new RunnerProcess({
          dir,
          settings,
          privateKey,
          apps: config.apps,
          isolation: config.taskIsolation,
          confinement,
          outputLimit: config.taskOutputLimitMb * 1_048_576,
          webRoot: config.webRoot || settings.url,
          log,
          drainMs: config.runnerDrainTimeout * 1000,
        });
        const onTerm = () => void runner.shutdown(true);
        const onInt = () => void runner.shutdown(false);
        process.on('SIGTERM', onTerm);
        process.on('SIGINT', onInt);
        log(`Runner ${settings.id} starting (folder ${dir})`);
        try {
          return await runner.run();
        } finally {
          process.off('SIGTERM', onTerm);
          process.off('SIGINT', onInt);
          unlock();
        }
      }
      default:
        console.log(runnerUsage);
        return sub && sub !== 'help' && sub !== '--help' ? 1 : 0;
    }
  } catch (err) {
    if (err instanceof RunnerCommandError || err instanceof RunnerFilesError) return fail(err.message);
    if (err instanceof RunnerBusyError) return fail(err.message);
    throw err;
  }
}
