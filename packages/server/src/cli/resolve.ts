import type { Project, TaskWithTemplate, Template } from '@signalbox/contracts';
import type { Api } from './api';
import { parseId } from './command';
import { ClientError } from './errors';

/**
 * Finding what a command names: a project by id or name, a template by id or name (in one project, or in any the
 * token reaches), a task by id. Task ids are unique on a server but the API reaches a task through its project
 * (/api/project/{project_id}/tasks/{id}): without --project, the projects the token reaches are asked in turn.
 */

/** Projects asked at once when looking for a template or a task across projects. */
const LOOKUPS_AT_ONCE = 4;

export const listProjects = (api: Api) => api.get<Project[]>('/projects');

/** `what` of each item, a few at a time, in the items' order. */
async function eachOf<T, R>(items: readonly T[], what: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += LOOKUPS_AT_ONCE)
    results.push(...(await Promise.all(items.slice(i, i + LOOKUPS_AT_ONCE).map(what))));
  return results;
}

/** Picks by id (all digits) or by name (exactly, else ignoring case when only one matches). */
function pick<T extends { id: number; name: string }>(items: readonly T[], ref: string, what: string): T[] {
  if (/^\d+$/.test(ref)) {
    const byId = items.filter((item) => item.id === Number(ref));
    if (byId.length) return byId;
  }
  const exact = items.filter((item) => item.name === ref);
  if (exact.length) return exact;
  const folded = items.filter((item) => item.name.toLowerCase() === ref.toLowerCase());
  if (folded.length > 1)
    throw new ClientError(
      `several ${what}s are named "${ref}" in other cases; give the exact name or the id`,
    );
  return folded;
}

/** The one item found; none or several is a ClientError saying so. */
function theOne<T>(found: readonly T[], none: () => string, several: (found: readonly T[]) => string): T {
  const [one, ...more] = found;
  if (one === undefined) throw new ClientError(none());
  if (more.length) throw new ClientError(several(found));
  return one;
}

export async function findProject(api: Api, ref: string): Promise<Project> {
  return theOne(
    pick(await listProjects(api), ref.trim(), 'project'),
    () => `no project "${ref}" among the projects this token reaches (signalbox projects lists them)`,
    (found) =>
      `${found.length} projects are named "${ref}" (ids ${found.map((p) => p.id).join(', ')}): give the id`,
  );
}

/** The projects to look in: the one named, or every one the token reaches; and how a message says where. */
async function searched(
  api: Api,
  projectRef: string | undefined,
): Promise<{ projects: Project[]; where: string }> {
  if (!projectRef) return { projects: await listProjects(api), where: 'in the projects this token reaches' };
  const project = await findProject(api, projectRef);
  return { projects: [project], where: `in project "${project.name}"` };
}

export const listTemplates = (api: Api, projectId: number) =>
  api.get<Template[]>(`/project/${projectId}/templates`);

/** A template by id or name, in `projectRef` when given, else in whichever reachable project holds it. */
export async function findTemplate(
  api: Api,
  ref: string,
  projectRef: string | undefined,
): Promise<{ project: Project; template: Template }> {
  const { projects, where } = await searched(api, projectRef);
  const lists = await eachOf(projects, async (project) => ({
    project,
    templates: await listTemplates(api, project.id),
  }));
  return theOne(
    lists.flatMap(({ project, templates }) =>
      pick(templates, ref.trim(), 'template').map((template) => ({ project, template })),
    ),
    () => `no template "${ref}" ${where} (signalbox templates lists them)`,
    (found) =>
      `${found.length} templates are named "${ref}" (${found
        .map(({ project, template }) => `id ${template.id} in project "${project.name}"`)
        .join(', ')}): give --project or the template id`,
  );
}

const taskPath = (projectId: number, taskId: number) => `/project/${projectId}/tasks/${taskId}`;

/** A task by id, in `projectRef` when given, else in whichever reachable project holds it. */
export async function findTask(
  api: Api,
  idText: string,
  projectRef: string | undefined,
): Promise<{ project: Project; task: TaskWithTemplate }> {
  const id = parseId(idText, 'the task id');
  const { projects, where } = await searched(api, projectRef);
  const hits = await eachOf(projects, async (project) => ({
    project,
    task: await api.find<TaskWithTemplate>(taskPath(project.id, id)),
  }));
  // Task ids are unique on a server: at most one project answers.
  const hit = hits.find((h) => h.task !== null);
  if (!hit?.task) throw new ClientError(`no task ${id} ${where}`);
  return { project: hit.project, task: hit.task };
}

export const getTask = (api: Api, projectId: number, taskId: number) =>
  api.get<TaskWithTemplate>(taskPath(projectId, taskId));
