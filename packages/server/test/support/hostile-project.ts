import type { TestDialect } from './dialects';
import type { Harness } from './harness';
import { hostileRepo, recordingStandIn } from './hostile-repo';
import { insertLocalInventory, insertRepository, toolsOnPath } from './task-fixtures';
import { harnessWithProject } from './task-runs';

/**
 * The set-up of the tests that run every app against the hostile repository: recording stand-ins for terraform,
 * tofu, terragrunt, pulumi and pwsh first on PATH (python is the real python3) (`record` holds their calls), a harness running up to 10 tasks at once with a
 * project, the hostile repository as that project's repository and a local inventory. `close` puts PATH back and
 * closes the harness.
 */
export async function hostileProject(dialect: TestDialect) {
  const tools = toolsOnPath({
    terraform: recordingStandIn,
    tofu: recordingStandIn,
    pulumi: recordingStandIn,
    terragrunt: recordingStandIn,
    pwsh: recordingStandIn,
  });
  let harness: Harness | undefined;
  try {
    const project = await harnessWithProject(dialect, { maxParallelTasks: 10 });
    const { h, projectId } = project;
    harness = h;
    const hostile = hostileRepo(h.dataDir);
    return {
      ...project,
      hostile,
      record: tools.record,
      repoId: await insertRepository(h.deps, projectId, { git_url: hostile.repo }),
      inventoryId: await insertLocalInventory(h.deps, projectId),
      async close() {
        tools.restore();
        await h.close();
      },
    };
  } catch (err) {
    tools.restore();
    await harness?.close();
    throw err;
  }
}

export type HostileProject = Awaited<ReturnType<typeof hostileProject>>;
