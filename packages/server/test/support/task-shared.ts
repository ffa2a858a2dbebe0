import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxPath } from '../../src/lib/sandbox-paths';

/**
 * A directory this test process shares with the tasks it runs, as an admin shares a tools directory through
 * SIGNALBOX_TASK_SANDBOX_PATHS (writable): stand-in tools, the records they write and flag files the tests touch
 * live under it, so tasks in the sandbox reach them. Nothing else of the test process is visible to its tasks.
 */
export const TASK_SHARED_DIR = join(tmpdir(), `sb-task-shared-${process.pid}`);
mkdirSync(TASK_SHARED_DIR, { recursive: true });
process.on('exit', () => rmSync(TASK_SHARED_DIR, { recursive: true, force: true }));

/** TASK_SHARED_DIR as a harness's taskSandboxPaths. */
export const taskSharedPaths: SandboxPath[] = [{ path: TASK_SHARED_DIR, writable: true }];

/** TASK_SHARED_DIR as the environment setting of a server or runner process. */
export const taskSharedEnv = { SIGNALBOX_TASK_SANDBOX_PATHS: `${TASK_SHARED_DIR}:rw` };

/** A new temporary directory that tasks can read and write. */
export const sharedTempDir = (prefix: string) => mkdtempSync(join(TASK_SHARED_DIR, prefix));
