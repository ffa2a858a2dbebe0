import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { GitTransport } from '@signalbox/contracts';
import { type Job, type Key, TaskFailed } from './job';

/**
 * A helper answering password prompts from environment variables (never argv, never the file itself):
 * git asks "Username for …" / "Password for …", ssh-add asks for the passphrase. ssh-add asks again after a
 * wrong passphrase ("Bad passphrase, try again …") until it gets an empty answer, so that prompt must fail:
 * answering it with the same secret looped forever and the task never ended.
 */
const ASKPASS = `#!/bin/sh
case "$1" in
  *sername*) printf '%s\\n' "$SIGNALBOX_ASKPASS_USER" ;;
  "Bad passphrase"*) exit 1 ;;
  *) printf '%s\\n' "$SIGNALBOX_ASKPASS_SECRET" ;;
esac
`;

export function askpassScript(job: Job): string {
  const path = join(job.dirs.tmp, 'askpass.sh');
  if (!existsSync(path)) job.secretFile('askpass.sh', ASKPASS, 0o700);
  return path;
}

export type Agent = { sock: string; stop(): void };

/**
 * Starts a per-task ssh-agent on a socket in the task's temp dir and loads the key through stdin (the key never
 * touches the disk); a passphrase is answered by the askpass helper. stop() kills the agent.
 */
export async function startSshAgent(job: Job, key: Key, label: string): Promise<Agent> {
  if (!key.private_key) throw new TaskFailed(`Key "${label}" has no private key`);
  job.secretFile('.keep', '');
  const sock = join(job.dirs.tmp, `ssh-agent-${key.id}-${Math.random().toString(36).slice(2, 8)}.sock`);
  // In the task's sandbox like every other process of the task: a crash of the server cannot leave it behind.
  const unit = job.sandbox.enter('ssh-agent', ['-D', '-a', sock]);
  const agent = spawn(unit.command, unit.args, {
    detached: true,
    stdio: 'ignore',
    env: {
      PATH: job.toolPath(),
      SIGNALBOX_TASK_ID: String(job.task.id),
      SIGNALBOX_TASK_OWNER: job.dirs.owner,
    },
  });
  if (agent.pid) unit.started(agent.pid);
  agent.on('exit', () => void unit.release());
  agent.on('error', () => void unit.release());
  const stop = () => {
    try {
      if (agent.pid) process.kill(-agent.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  job.onStop(stop);
  for (let i = 0; i < 150 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 20));
  if (!existsSync(sock)) {
    stop();
    throw new TaskFailed('Cannot start ssh-agent');
  }
  const privateKey = key.private_key.endsWith('\n') ? key.private_key : `${key.private_key}\n`;
  const add = () =>
    job.capture(
      {
        command: 'ssh-add',
        args: ['-'],
        cwd: job.dirs.tmp,
        env: {
          PATH: job.toolPath(),
          HOME: job.dirs.home,
          SSH_AUTH_SOCK: sock,
          SSH_ASKPASS: askpassScript(job),
          SSH_ASKPASS_REQUIRE: 'force',
          DISPLAY: ':0',
          SIGNALBOX_ASKPASS_SECRET: key.passphrase,
        },
      },
      privateKey,
    );
  // The socket's file appears when the agent binds it, a moment before it listens: a connection refused in between
  // is tried again (up to 150 times, 20 ms apart).
  let res = await add();
  for (let i = 0; i < 150 && res.code !== 0 && /Error connecting to agent/.test(res.stderr); i++) {
    await new Promise((r) => setTimeout(r, 20));
    res = await add();
  }
  if (res.code !== 0) {
    stop();
    // ssh-add says nothing when the passphrase is wrong or missing; other failures come with a reason.
    const reason = job.sink.mask(res.stderr.trim()) || 'wrong or missing passphrase';
    throw new TaskFailed(`Cannot load key "${label}" into ssh-agent: ${reason}`);
  }
  return { sock, stop };
}

/**
 * Environment for git and ssh: no prompts, no host key pinning (as the peer), the agent when there is one, and
 * only the transports in `allow` (GIT_ALLOW_PROTOCOL overrides every protocol.*.allow setting: ext, fd and any
 * remote helper stay refused).
 */
export function gitEnv(
  job: Job,
  agent: Agent | null,
  login: Key | null,
  allow: GitTransport[],
): Record<string, string> {
  const env = job.baseEnv();
  env.GIT_ALLOW_PROTOCOL = allow.join(':');
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_SSH_COMMAND = 'ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes';
  if (agent) env.SSH_AUTH_SOCK = agent.sock;
  if (login && (login.password || login.login)) {
    env.GIT_ASKPASS = askpassScript(job);
    env.SIGNALBOX_ASKPASS_USER = login.login || 'x-access-token';
    env.SIGNALBOX_ASKPASS_SECRET = login.password;
  }
  return env;
}
