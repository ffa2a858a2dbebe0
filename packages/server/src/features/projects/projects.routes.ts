import { can, projectBackup, projectInput, projectRoleInfoSchema, projectSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps';
import { noContentResponse, type ZodTypeProvider } from '../../http/path-params';
import { currentUser } from '../auth/auth.hook';
import { readBackup } from './backup';
import { createDemoContent } from './demo';
import { projectRoutes } from './projects.guard';
import { createProject, deleteProject, updateProject } from './projects.service';
import { listProjects, toProject } from './projects.store';
import { restoreProject } from './restore';

/** Backups are whole projects; they may be larger than an ordinary request. */
const BACKUP_BODY_LIMIT = 32 * 1024 * 1024;

/** A file name for the download: the project's name reduced to safe characters. */
const backupFileName = (name: string, id: number) =>
  `${name.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^_+|_+$/g, '') || `project-${id}`}-backup.json`;

/** A backup whose integrations and project keep no alias. */
function withoutAliases(backup: Awaited<ReturnType<typeof readBackup>>) {
  return {
    ...backup,
    integrations: backup.integrations.map((i) => ({ ...i, aliases: [] })),
    integration_aliases: [],
  };
}

export function projectsRoutes(fastify: FastifyInstance, deps: Deps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/api/projects', { schema: { response: { 200: z.array(projectSchema) } } }, async (request) => {
    const user = currentUser(request);
    return listProjects(deps.db, user.id, user.admin === 1);
  });

  const create = { schema: { body: projectInput, response: { 201: projectSchema } } };
  app.post('/api/projects', create, async (request, reply) => {
    const project = await createProject(deps, currentUser(request), request.body, createDemoContent);
    return reply.status(201).send(project);
  });

  // The backup is checked after the caller is known to be allowed to create projects (restoreProject).
  const restore = {
    bodyLimit: BACKUP_BODY_LIMIT,
    config: { parsesInHandler: true },
    schema: { body: projectBackup, response: { 200: projectSchema } },
  };
  app.post('/api/projects/restore', restore, async (request, reply) => {
    // The peer answers 200 with the new project (Swagger lists only 200).
    const project = await restoreProject(deps, currentUser(request), request.body);
    return reply.status(200).send(project);
  });

  projectRoutes(app, deps, async (scope) => {
    scope.get('/', { schema: { response: { 200: projectSchema } } }, async (request) =>
      toProject(request.project),
    );
    scope.get('/backup', async (request, reply) => {
      const full = await readBackup(deps.db, request.project.id);
      // Alias URLs start tasks: a member who may not run tasks (a guest) gets the backup without them.
      const backup = can(request.permissions, 'runProjectTasks') ? full : withoutAliases(full);
      return reply
        .header('content-type', 'application/json; charset=utf-8')
        .header(
          'content-disposition',
          `attachment; filename="${backupFileName(request.project.name, request.project.id)}"`,
        )
        .send(JSON.stringify(backup, null, 2));
    });
    scope.get('/role', { schema: { response: { 200: projectRoleInfoSchema } } }, async (request) => ({
      role: request.projectRole,
      permissions: request.permissions,
    }));
    scope.put(
      '/',
      {
        config: { permission: 'updateProject' },
        schema: { body: projectInput, response: noContentResponse },
      },
      async (request, reply) => {
        await updateProject(deps, currentUser(request), request.project.id, request.body);
        return reply.status(204).send();
      },
    );
    const remove = {
      config: { permission: 'updateProject' as const },
      schema: { response: noContentResponse },
    };
    scope.delete('/', remove, async (request, reply) => {
      await deleteProject(deps, currentUser(request), request.project.id, request.project.name);
      return reply.status(204).send();
    });
  });
}
