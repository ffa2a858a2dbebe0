import type { TestDialect } from './dialects';
import { createHarness } from './harness';
import { recordingStarter, rows } from './scheduler-rows';

/**
 * A harness for tests that drive their own scheduler on a manual clock: the app's own scheduler (on the real clock)
 * and task engine are closed. With a recording task starter, the row factories and a project with one template.
 */
export async function schedulerHarness(dialect: TestDialect) {
  const h = await createHarness(dialect);
  await h.deps.scheduler.close();
  await h.deps.tasks.close();
  const starter = recordingStarter(h.deps.db, h.deps.dialect);
  const r = rows(h.deps.db, h.deps.dialect);
  const projectId = await r.project();
  return { h, starter, r, projectId, templateId: await r.template(projectId) };
}
