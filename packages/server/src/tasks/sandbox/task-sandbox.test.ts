import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import {
  type AttackTargets,
  ansibleAttack,
  bashAttack,
  laterTask,
  poisonPaths,
  pythonAttack,
  victimTask,
} from '../../../test/support/sandbox-attacks';
import { postForId, serverChild, serverDb } from '../../../test/support/server-child';
import { cookieApi, serverBin, serverProcessEnv } from '../../../test/support/server-process';
import {
  gitRepo,
  insertInventory,
  insertRepository,
  insertTemplate,
  LOCAL_INVENTORY,
  waitFor,
} from '../../../test/support/task-fixtures';

const attackers = ['bash', 'python', 'ansible'] as const;
type Attacker = (typeof attackers)[number];

/** The pids of processes running exactly `sleep <seconds>` (the attack's leftover; the number is unique). */
function sleepers(seconds: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1') === `sleep\0${seconds}\0`) out.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

const kill = (pids: number[]) => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
};

/**
 * A repository of one project is hostile: its Bash script, Python script or Ansible playbook tries to read the
 * server's secrets, another project's task and repository cache, to write where the system or a later task reads,
 * and to leave a process behind. Confined (`auto` on a machine with bubblewrap) every attempt fails; with the
 * sandbox off the same attacks get through, so the checks below can fail.
 */
describe.each(testDialects())('a hostile repository on $name', (dialect) => {
  describe.each(['auto', 'off'] as const)('with SIGNALBOX_TASK_SANDBOX=%s', (sandbox) => {
    const confined = sandbox === 'auto';
    const run = randomBytes(4).toString('hex');
    const canary = {
      env: `envcanary${run}`,
      db: `dbcanary${run}`,
      victim: `victimcanary${run}`,
      repo: `repocanary${run}`,
    };
    const dataDir = mkdtempSync(join(tmpdir(), 'sb-sandbox-attack-'));
    let server: ReturnType<typeof serverChild>;
    let database: Awaited<ReturnType<typeof dialect.create>>;
    let rows: ReturnType<typeof serverDb>;
    let api: ReturnType<typeof cookieApi>;
    let secretKey = '';
    let attackProject = 0;
    let inventoryId = 0;
    let victimTaskId = 0;
    let victimProject = 0;
    const cleanups: (() => void)[] = [];

    beforeAll(async () => {
      database = await dialect.create(dataDir);
      server = serverChild(
        serverProcessEnv(dataDir, {
          SIGNALBOX_DB_URL: database.url,
          SIGNALBOX_TASK_SANDBOX: sandbox,
          // A key secret the server reads from its own environment: what an attacker wants from /proc.
          SIGNALBOX_KEY_DEPLOY: canary.env,
          SIGNALBOX_MAX_PARALLEL_TASKS: '4',
        }),
      );
      const cookie = await server.startAndSignIn();
      api = cookieApi(server.port, cookie);
      rows = serverDb(database.url);
      secretKey = readFileSync(join(dataDir, 'secret.key'), 'utf8').trim();
      expect(secretKey.length).toBeGreaterThan(20);

      // The victim: another project (named after the database canary), its secret in its task's environment and
      // folder, and a repository whose cache holds another secret. Its task keeps running during the attacks.
      victimProject = await postForId(api, '/api/projects', { name: canary.db });
      const victimRepo = await insertRepository(rows.rows, victimProject, {
        git_url: `file://${gitRepo({ 'victim.sh': victimTask, 'secret.txt': `${canary.repo}\n` })}`,
      });
      const victimEnv = await postForId(api, `/api/project/${victimProject}/environment`, {
        name: 'Victim env',
        json: '{}',
        env: '{}',
        secrets: [{ type: 'env', name: 'VICTIM_SECRET', secret: canary.victim, operation: 'create' }],
      });
      const victimTemplate = await insertTemplate(rows.rows, victimProject, {
        repository_id: victimRepo,
        playbook: 'victim.sh',
        environment_id: victimEnv,
      });
      victimTaskId = await postForId(api, `/api/project/${victimProject}/tasks`, {
        template_id: victimTemplate,
      });
      await waitFor(
        async () => (await rows.outputOf(victimTaskId)).includes('victim ready'),
        60_000,
        'the victim task to run',
      );

      attackProject = await postForId(api, '/api/projects', { name: `Attackers ${run}` });
      inventoryId = await insertInventory(rows.rows, attackProject, {
        type: 'static',
        inventory: LOCAL_INVENTORY,
      });
    }, 120_000);

    afterAll(async () => {
      for (const c of cleanups) c();
      if (server?.running()) {
        // The victim would otherwise hold the server's shutdown for its whole grace period.
        if (victimTaskId)
          await api('POST', `/api/project/${victimProject}/tasks/${victimTaskId}/stop`, { force: true });
        await server.stop('SIGTERM');
      }
      await rows?.handle.destroy();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }, 60_000);

    /**
     * Runs a task of a new template of `playbook` (app `app`) of the repository `repositoryId`, or of a new one of
     * `files`; its output.
     */
    async function runOf(files: Record<string, string>, playbook: string, app: string, repository?: number) {
      const repositoryId =
        repository ??
        (await insertRepository(rows.rows, attackProject, {
          git_url: `file://${gitRepo(files)}`,
          name: `repo ${randomBytes(3).toString('hex')}`,
        }));
      const templateId = await insertTemplate(rows.rows, attackProject, {
        repository_id: repositoryId,
        playbook,
        app,
        inventory_id: app === 'ansible' ? inventoryId : null,
        name: `tpl ${randomBytes(3).toString('hex')}`,
      });
      const id = await postForId(api, `/api/project/${attackProject}/tasks`, { template_id: templateId });
      const ended = await waitFor(
        async () => {
          const res = await api('GET', `/api/project/${attackProject}/tasks/${id}`);
          const task = (await res.json()) as { status: string };
          return ['success', 'error', 'stopped'].includes(task.status) && task;
        },
        120_000,
        `task ${id} to end`,
      );
      return { status: ended.status, out: (await rows.outputOf(id)).join('\n'), repositoryId };
    }

    /** One attacker's run: what it reached, by check. */
    async function attack(attacker: Attacker): Promise<Record<string, boolean>> {
      const targets: AttackTargets = {
        dataDir,
        mark: `${sandbox}-${attacker}-${run}`,
        sleepSeconds: 700_000 + Math.floor(Math.random() * 200_000),
      };
      const poison = poisonPaths(targets);
      cleanups.push(() => {
        kill(sleepers(targets.sleepSeconds));
        rmSync(poison.etc, { force: true });
        rmSync(poison.usr, { force: true });
      });
      const files: Record<string, string> = {
        'attack.sh': bashAttack(targets),
        'attack.py': pythonAttack(targets),
        'attack.yml': ansibleAttack(),
        'later.sh': laterTask(targets),
      };
      const entry = {
        bash: ['attack.sh', 'bash'],
        python: ['attack.py', 'python'],
        ansible: ['attack.yml', 'ansible'],
      }[attacker] as [string, string];
      const done = await runOf(files, ...entry);
      // The attack ran to its end: a confined failure below is the sandbox's, not a script that never started.
      expect(done.out).toContain('ATTACK START');
      expect(done.out).toContain('ATTACK END');
      expect(done.status, done.out).toBe('success');
      const lines = done.out.split('\n');
      const leftover = sleepers(targets.sleepSeconds);
      // From the attacker's repository: its working copy is a copy of the one kept from the attack's clone.
      const later = await runOf(files, 'later.sh', 'bash', done.repositoryId);
      expect(later.out).toContain('LATER END');
      return {
        'the secret key': done.out.includes(secretKey),
        'the SQLite database file': done.out.includes(canary.db),
        "the server's environment": done.out.includes(canary.env),
        "the server's command line": done.out.includes(serverBin),
        // As root the server reads /etc/shadow; so would an unconfined task.
        "the machine's /etc/shadow": lines.some((l) => /SHADOW root:/.test(l)),
        "another task's folder": lines.some((l) => l.includes('TASKFILE') && l.includes(canary.victim)),
        "another task's environment": lines.some(
          (l) => l.includes('ENV') && l.includes(`VICTIM_SECRET=${canary.victim}`),
        ),
        "another project's repository cache": done.out.includes(canary.repo),
        'a write to /etc': existsSync(poison.etc),
        'a write to /usr': existsSync(poison.usr),
        'a file a later task reads (HOME, /tmp, the repository cache)':
          later.out.includes('LATER READ poisoned'),
        "the working copy a later task's is copied from": later.out.includes('LATER COPY READ poisoned'),
        'a process left running after the task ended': leftover.length > 0,
      };
    }

    it(confined
      ? 'a Bash, a Python and an Ansible attacker reach nothing of the server, other tasks or later tasks'
      : 'the same attackers get through', async () => {
      // The three attackers at once (each with its own marks), as three pushes to the repository would run.
      const reached = Object.fromEntries(
        await Promise.all(attackers.map(async (a) => [a, await attack(a)] as const)),
      );
      const expectedOf = (checks: Record<string, boolean>) =>
        Object.fromEntries(
          Object.keys(checks).map((what) => [
            what,
            // Only SQLite keeps the database in the data directory.
            what === 'the SQLite database file' && dialect.name !== 'sqlite' ? false : !confined,
          ]),
        );
      expect(reached).toEqual(Object.fromEntries(attackers.map((a) => [a, expectedOf(reached[a]!)])));
    }, 240_000);
  });
});
