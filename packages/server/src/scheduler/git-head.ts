import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBranchName, isUsableRepositoryUrl, repositoryType, transportOf } from '@signalbox/contracts';

/** Credentials of the repository's access key, already decrypted. */
export type GitAuth =
  | { type: 'none' }
  | { type: 'login_password'; login: string; password: string }
  | { type: 'ssh'; login: string; private_key: string; passphrase: string };

const TIMEOUT_MS = 60_000;

function run(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { env, timeout: TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err)
        reject(
          new Error(
            `git ${args[0] === '-C' ? args[2] : args[0]} failed: ${String(stderr).trim().slice(0, 500) || err.message}`,
          ),
        );
      else resolve(String(stdout));
    });
  });
}

/**
 * The commit the branch points at, as `git ls-remote <url> <branch>` reports it. A local-path repository is
 * used in place by the task engine, so its checked-out HEAD is what a task would run. Returns null when the
 * branch does not exist. Secrets reach git only through the environment of the child (never argv or a URL).
 * A URL or branch git could read as an option or another transport (stored before the rules, or restored from
 * a backup) is refused before git starts, and git may use only the repository's own transport.
 */
export async function branchHead(
  url: string,
  branch: string,
  auth: GitAuth = { type: 'none' },
): Promise<string | null> {
  const type = isUsableRepositoryUrl(url) ? repositoryType(url) : null;
  if (!type) throw new Error('the repository URL is incorrect');
  if (!isBranchName(branch)) throw new Error('the branch name is incorrect');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_ALLOW_PROTOCOL: transportOf(type),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    LC_ALL: 'C',
  };
  if (type === 'local') {
    if (!existsSync(join(url, '.git')) && !existsSync(join(url, 'HEAD'))) {
      throw new Error('the local repository path is not a git repository');
    }
    const out = await run(['-C', url, 'rev-parse', '--verify', 'HEAD'], env);
    return out.trim() || null;
  }
  let dir: string | undefined;
  try {
    if (auth.type !== 'none') {
      dir = mkdtempSync(join(tmpdir(), 'signalbox-lsremote-'));
      const askpass = join(dir, 'askpass.sh');
      // Answers git's/ssh's prompts from the environment: a username prompt gets the login, anything else the secret.
      writeFileSync(
        askpass,
        '#!/bin/sh\ncase "$1" in\n  Username*) printf \'%s\\n\' "$SIGNALBOX_GIT_LOGIN" ;;\n  *) printf \'%s\\n\' "$SIGNALBOX_GIT_SECRET" ;;\nesac\n',
        { mode: 0o700 },
      );
      env.SIGNALBOX_GIT_LOGIN = auth.login;
      if (auth.type === 'login_password') {
        env.GIT_ASKPASS = askpass;
        env.SIGNALBOX_GIT_SECRET = auth.password;
      } else {
        const keyFile = join(dir, 'id');
        writeFileSync(keyFile, auth.private_key.endsWith('\n') ? auth.private_key : `${auth.private_key}\n`, {
          mode: 0o600,
        });
        env.SIGNALBOX_GIT_SECRET = auth.passphrase;
        env.SSH_ASKPASS = askpass;
        env.SSH_ASKPASS_REQUIRE = 'force';
        env.DISPLAY = env.DISPLAY || ':0';
        env.GIT_SSH_COMMAND = `ssh -i '${keyFile}' -o IdentitiesOnly=yes -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile='${join(dir, 'known_hosts')}'`;
      }
    }
    const out = await run(['ls-remote', '--', url, branch], env);
    const wanted = new Set([branch, `refs/heads/${branch}`]);
    for (const line of out.split('\n')) {
      const [hash, ref] = line.split('\t');
      if (hash && ref && wanted.has(ref)) return hash;
    }
    return null;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
