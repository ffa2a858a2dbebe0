import type { TestProject } from 'vitest/node';
import { startServer } from './server';
import { terraformStandInEnv } from './terraform';

export type SharedServer = { url: string; dbFile: string };

declare module 'vitest' {
  export interface ProvidedContext {
    sharedServer: SharedServer;
  }
}

/**
 * Global setup of the e2e project: one Signalbox server for every test file that does not need a server of its
 * own. Test files create their own users and projects on it. Its settings are the union of what those files need:
 * a terraform stand-in on PATH and a 90-day task retention default.
 */
export default async function setup(project: TestProject) {
  const server = await startServer({ ...terraformStandInEnv(), SIGNALBOX_TASK_RETENTION_DAYS: '90' });
  project.provide('sharedServer', { url: server.url, dbFile: server.dbFile });
  return () => server.stop();
}
