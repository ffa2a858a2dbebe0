import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyParts, isDockerIgnored, parseDockerfile, readRepoFile, repoRoot } from '../support/deploy-files';
import { freePort } from '../support/net';

/**
 * deploy/Dockerfile's own steps, run without Docker (no daemon here): the build stage's COPY and RUN lines in a
 * temp dir standing for /app, then the runtime stage's COPY --from=build lines, its CMD and its HEALTHCHECK.
 * What is not run: apt-get (Debian packages of the base image) and the downloads of `npm ci` — `npm ci
 * --dry-run` checks that the copied manifests and the lockfile agree, and node_modules is then the repository's
 * installed one, linked in. `npm prune` runs as a dry run for the same reason.
 */
const instructions = parseDockerfile(readRepoFile('deploy/Dockerfile'));
const ignore = readRepoFile('deploy/Dockerfile.dockerignore');
const [buildStage, runtimeStage] = [...new Set(instructions.map((i) => i.stage))];
const workdir = (stage: string) =>
  instructions.find((i) => i.stage === stage && i.keyword === 'WORKDIR')?.args;
const work = mkdtempSync(join(tmpdir(), 'sb-docker-build-'));
const build = join(work, 'build');
const runtime = join(work, 'runtime');
const env: Record<string, string | undefined> = { ...process.env, npm_config_audit: 'false' };
for (const name of Object.keys(env)) if (/^(npm_|SIGNALBOX_|SEMAPHORE_)/.test(name)) delete env[name];

/** A path of the image (absolute, or relative to the stage's WORKDIR) in the temp dir standing for the stage. */
const local = (root: string, stage: string, path: string) =>
  join(root, path.startsWith('/') ? path.slice((workdir(stage) ?? '').length) : path);

/** COPY src… dest as Docker does it: a directory's content into dest, a file into dest (a dir when it ends in /). */
function copy(from: string, to: string, ignored: (path: string) => boolean) {
  const target = to.endsWith('/') ? join(to, from.split('/').at(-1) ?? '') : to;
  mkdirSync(dirname(target), { recursive: true });
  cpSync(from, target, { recursive: true, verbatimSymlinks: true, filter: (src) => !ignored(src) });
}

/**
 * node_modules as `npm ci` would leave it: the repository's installed packages, workspaces linked to the stage's,
 * and a workspace's own node_modules where npm nested a package there (a version the root cannot hold).
 */
function linkInstalledModules(root: string) {
  const modules = join(root, 'node_modules');
  mkdirSync(join(modules, '@signalbox'), { recursive: true });
  for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
    if (entry !== '@signalbox') symlinkSync(join(repoRoot, 'node_modules', entry), join(modules, entry));
  }
  for (const workspace of readdirSync(join(repoRoot, 'node_modules', '@signalbox'))) {
    symlinkSync(`../../packages/${workspace}`, join(modules, '@signalbox', workspace));
    const nested = join(repoRoot, 'packages', workspace, 'node_modules');
    if (!existsSync(nested)) continue;
    mkdirSync(join(root, 'packages', workspace), { recursive: true });
    symlinkSync(nested, join(root, 'packages', workspace, 'node_modules'));
  }
}

function run(command: string, cwd: string) {
  const result = spawnSync('sh', ['-c', command], { cwd, env, encoding: 'utf8', timeout: 300_000 });
  expect(result.status, `${command}\n${result.stdout}\n${result.stderr}`).toBe(0);
}

/**
 * The build stage runs the real web and server builds: minutes on a loaded 2-core machine, where vitest's usual
 * 60 s is too short. Each command has its own limit (run's spawnSync timeout) below this one.
 */
const BUILD_TIMEOUT_MS = 360_000;

describe('deploy/Dockerfile steps', () => {
  let server: ChildProcess | null = null;
  let stub: Server | null = null;
  afterAll(() => {
    if (server?.exitCode === null) server.kill('SIGKILL');
    stub?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it(
    'builds: the build stage COPY and RUN lines, in order',
    () => {
      const skipped: string[] = [];
      for (const { keyword, args, stage } of instructions.filter((i) => i.stage === buildStage)) {
        if (keyword === 'COPY') {
          const { sources, dest } = copyParts(args);
          for (const source of sources)
            copy(join(repoRoot, source), local(build, stage, dest), (src) =>
              isDockerIgnored(ignore, src.slice(repoRoot.length)),
            );
        }
        if (keyword !== 'RUN') continue;
        for (const command of args.split(' && ')) {
          if (/^(apt-get |rm -rf \/var\/lib\/apt\/lists)/.test(command)) skipped.push(command);
          else if (/^npm ci\b/.test(command)) {
            run(`${command} --dry-run --ignore-scripts`, build);
            linkInstalledModules(build);
          } else if (/^npm prune\b/.test(command)) run(`${command} --dry-run`, build);
          else run(command, build);
        }
      }
      expect(skipped.length).toBeGreaterThan(0);
      expect(existsSync(join(build, 'packages/web/dist/index.html'))).toBe(true);
    },
    BUILD_TIMEOUT_MS,
  );

  it('assembles the runtime stage from what the build stage produced, and its CMD serves the console', async () => {
    for (const { keyword, args, stage } of instructions.filter((i) => i.stage === runtimeStage)) {
      if (keyword !== 'COPY') continue;
      const { from, sources, dest } = copyParts(args);
      expect(from).toBe(buildStage);
      for (const source of sources) {
        const built = local(build, buildStage, source);
        expect(existsSync(built), source).toBe(true);
        copy(built, local(runtime, stage, dest), () => false);
      }
    }
    const port = await freePort();
    const imageEnv = Object.fromEntries(
      instructions
        .filter((i) => i.stage === runtimeStage && i.keyword === 'ENV')
        .flatMap((i) => i.args.split(' ').map((pair) => pair.split(/=(.*)/s, 2))),
    );
    expect(imageEnv.SIGNALBOX_DATA_DIR).toBeDefined();
    const cmd = JSON.parse(instructions.findLast((i) => i.keyword === 'CMD')?.args ?? '[]') as string[];
    server = spawn(cmd[0], cmd.slice(1), {
      cwd: runtime,
      env: {
        ...env,
        ...imageEnv,
        SIGNALBOX_DATA_DIR: join(work, 'data'),
        SIGNALBOX_PORT: String(port),
        SIGNALBOX_LOG_LEVEL: 'warn',
      },
      stdio: 'pipe',
    });
    let out = '';
    server.stdout?.on('data', (d) => {
      out += String(d);
    });
    server.stderr?.on('data', (d) => {
      out += String(d);
    });
    await expect
      .poll(async () => {
        expect(server?.exitCode, out).toBeNull();
        return (await fetch(`http://127.0.0.1:${port}/`).catch(() => null))?.status;
      })
      .toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toContain('<div id="root">');
  }, 180_000);

  it('HEALTHCHECK passes exactly when /api/health/live answers 2xx on the configured port', async () => {
    const healthcheck = instructions.findLast((i) => i.keyword === 'HEALTHCHECK')?.args ?? '';
    const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
    let status = 200;
    stub = createServer((req, res) => {
      res.statusCode = req.url === '/api/health/live' ? status : 404;
      res.end();
    });
    const port = await freePort();
    await new Promise<void>((resolve) => stub?.listen(port, '127.0.0.1', resolve));
    // Run asynchronously: the stub answers from this process.
    const check = (vars: Record<string, string>) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(command[0], command.slice(1), { env: { ...env, ...vars }, stdio: 'ignore' });
        child.on('exit', (code) => resolve(code));
      });
    expect(await check({ SIGNALBOX_PORT: String(port) })).toBe(0);
    expect(await check({ SEMAPHORE_PORT: `:${port}` })).toBe(0);
    status = 503;
    expect(await check({ SIGNALBOX_PORT: String(port) })).toBe(1);
    await new Promise((resolve) => stub?.close(resolve));
    expect(await check({ SIGNALBOX_PORT: String(port) })).toBe(1);
  });
});
