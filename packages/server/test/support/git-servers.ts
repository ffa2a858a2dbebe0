import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  type Dirent,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { freePort } from './net';

/**
 * Real git servers on loopback for the engine's remote checkout tests: `git http-backend` behind HTTP Basic
 * auth, and a throwaway `sshd`. Plus the leak checks those tests share (files on disk, process argv).
 */

export type GitHttpRequest = { method: string; path: string; user: string | null; status: number };

export type GitHttpServer = {
  /** http://127.0.0.1:<port> */
  base: string;
  requests: GitHttpRequest[];
  /** Delay before each request is answered, so a test can watch the client processes while they wait. */
  delayMs: number;
  close(): Promise<void>;
};

/** Serves every bare repository under `root` through git http-backend (CGI) to one login/password. */
export async function startGitHttpServer(
  root: string,
  creds: { user: string; password: string },
): Promise<GitHttpServer> {
  const requests: GitHttpRequest[] = [];
  const server = createHttpServer((req, res) => {
    const record: GitHttpRequest = { method: req.method ?? '', path: req.url ?? '', user: null, status: 0 };
    requests.push(record);
    setTimeout(() => handle(req, res, record), state.delayMs);
  });
  const state: GitHttpServer = {
    base: '',
    requests,
    delayMs: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  function handle(req: IncomingMessage, res: ServerResponse, record: GitHttpRequest) {
    const auth = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    const [user, ...rest] = auth ? Buffer.from(auth[1]!, 'base64').toString().split(':') : [];
    if (user !== creds.user || rest.join(':') !== creds.password) {
      record.user = user ?? null;
      record.status = 401;
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    record.user = user;
    const url = new URL(req.url ?? '/', 'http://localhost');
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(url.pathname),
      REQUEST_METHOD: req.method ?? 'GET',
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: user,
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      GATEWAY_INTERFACE: 'CGI/1.1',
      SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    };
    if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
    if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
    if (typeof req.headers['git-protocol'] === 'string') env.HTTP_GIT_PROTOCOL = req.headers['git-protocol'];
    const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    cgi.stdin.on('error', () => {});
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (started) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const crlf = head.indexOf('\r\n\r\n');
      const lf = head.indexOf('\n\n');
      const [end, sep] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : [lf, 2];
      if (end < 0) return;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString().split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      record.status = status;
      res.writeHead(status, headers);
      started = true;
      res.write(head.subarray(end + sep));
    });
    cgi.stdout.on('end', () => {
      if (!started) {
        record.status = 502;
        res.writeHead(502);
      }
      res.end();
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  state.base = `http://127.0.0.1:${address.port}`;
  return state;
}

/** A bare copy of a working repository, for a server to serve. */
export function bareCopy(workDir: string, bareDir: string) {
  execFileSync('git', ['clone', '-q', '--bare', workDir, bareDir]);
  return bareDir;
}

/** Pushes the working repository's branch to the bare copy (a new upstream commit). */
export function pushTo(workDir: string, bareDir: string, branch = 'main') {
  execFileSync('git', ['-C', workDir, 'push', '-q', bareDir, `${branch}:${branch}`]);
}

export type KeyPair = { privateKey: string; publicKey: string };

/** An ed25519 key pair; the private key file is deleted at once so only the test's memory holds it. */
export function generateKeyPair(dir: string, name: string, passphrase = ''): KeyPair {
  const path = join(dir, name);
  execFileSync('ssh-keygen', [
    '-q',
    '-t',
    'ed25519',
    '-N',
    passphrase,
    '-C',
    `signalbox-${name}`,
    '-f',
    path,
  ]);
  const pair = {
    privateKey: readFileSync(path, 'utf8'),
    publicKey: readFileSync(`${path}.pub`, 'utf8').trim(),
  };
  rmSync(path);
  return pair;
}

export type Sshd = {
  port: number;
  /** The host's public key line (changes with restartWithNewHostKey). */
  hostKey: string;
  /** What sshd logged (-e): for failure messages. */
  log: string[];
  /** Stops sshd and starts it again on the same port with a freshly generated host key. */
  restartWithNewHostKey(): Promise<void>;
  stop(): Promise<void>;
};

export const SSHD = '/usr/sbin/sshd';

/**
 * A real sshd (-D -e) on a free loopback port with a test-generated host key and authorized_keys, no PAM and
 * no pid file, so it needs nothing from the system's ssh configuration.
 */
export async function startSshd(dir: string, authorizedKeys: string[]): Promise<Sshd> {
  if (!existsSync(SSHD))
    throw new Error(`${SSHD} is missing: install openssh-server (scripts/bootstrap.mjs --system)`);
  // sshd running as root insists on its privilege separation directory.
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  mkdirSync(dir, { recursive: true });
  const authorized = join(dir, 'authorized_keys');
  writeFileSync(authorized, `${authorizedKeys.join('\n')}\n`, { mode: 0o600 });
  const port = await freePort();
  const log: string[] = [];
  let child: ChildProcess | null = null;
  let generation = 0;

  const start = async () => {
    generation += 1;
    const hostKeyPath = join(dir, `host_ed25519_${generation}`);
    rmSync(hostKeyPath, { force: true });
    rmSync(`${hostKeyPath}.pub`, { force: true });
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKeyPath]);
    sshd.hostKey = readFileSync(`${hostKeyPath}.pub`, 'utf8').trim();
    const config = join(dir, 'sshd_config');
    writeFileSync(
      config,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKeyPath}`,
        `AuthorizedKeysFile ${authorized}`,
        'StrictModes no',
        'UsePAM no',
        'PidFile none',
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'AllowAgentForwarding no',
        'AllowTcpForwarding no',
        'X11Forwarding no',
        'PrintMotd no',
        'LogLevel VERBOSE',
        '',
      ].join('\n'),
    );
    const proc = spawn(SSHD, ['-D', '-e', '-f', config], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
    child = proc;
    let exited = false;
    proc.on('exit', () => {
      exited = true;
    });
    let buffered = '';
    let listening = false;
    proc.stderr?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        log.push(line);
        if (line.includes(`Server listening on 127.0.0.1 port ${port}`)) listening = true;
      }
    });
    const deadline = Date.now() + 10_000;
    while (!listening) {
      if (exited || Date.now() > deadline)
        throw new Error(`sshd did not start on port ${port}:\n${log.join('\n')}${buffered}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const stopChild = async () => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    await gone;
  };

  const sshd: Sshd = {
    port,
    hostKey: '',
    log,
    async restartWithNewHostKey() {
      await stopChild();
      await start();
    },
    stop: stopChild,
  };
  await start();
  return sshd;
}

/**
 * Regular files under `root` whose content contains any of `needles` (symlinks not followed; files that vanish
 * while looking are skipped). `sinceMs` limits the search to files changed since then (ctime), for big shared
 * directories like os.tmpdir(); GNU find picks those out several times faster than a stat per file from here.
 */
export function filesContaining(root: string, needles: string[], sinceMs = 0): string[] {
  const wanted = needles.filter(Boolean).map((n) => Buffer.from(n));
  const candidates = sinceMs
    ? spawnSync(
        'find',
        [root, '-xdev', '-type', 'f', '-newerct', `@${(sinceMs / 1000).toFixed(3)}`, '-print0'],
        {
          maxBuffer: 256 * 1024 * 1024,
        },
      )
        .stdout.toString()
        .split('\0')
        .filter(Boolean)
    : allFiles(root);
  return candidates.filter((path) => {
    try {
      const stat = lstatSync(path);
      if (!stat.isFile() || stat.size > 64 * 1024 * 1024) return false;
      const content = readFileSync(path);
      return wanted.some((n) => content.includes(n));
    } catch {
      return false; // gone or unreadable
    }
  });
}

/** Every entry under `root` (depth first, unreadable folders skipped) that `keep` accepts, by path. */
function walkTree(root: string, keep: (entry: Dirent) => boolean): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (keep(entry)) found.push(path);
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(root);
  return found;
}

const allFiles = (root: string) => walkTree(root, (entry) => entry.isFile());

/** Every file named `name` under `root`. */
export const filesNamed = (root: string, name: string) => walkTree(root, (entry) => entry.name === name);

/**
 * Samples the argv of every process on the machine (/proc/<pid>/cmdline) every few milliseconds until stop(),
 * which returns each distinct command line seen (arguments joined by spaces).
 */
export function watchArgv(everyMs = 5): { stop(): string[] } {
  const seen = new Set<string>();
  const sample = () => {
    let pids: string[];
    try {
      pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
    } catch {
      return;
    }
    for (const pid of pids) {
      try {
        const raw = readFileSync(`/proc/${pid}/cmdline`);
        if (raw.length) seen.add(raw.toString().replace(/\0+$/, '').split('\0').join(' '));
      } catch {
        // ended meanwhile
      }
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return [...seen];
    },
  };
}

export { freePort };
