import { can, projectBackup, projectSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import type { ZodTypeProvider } from '../../http/path-params';
import { readBackup } from './backup';
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

/** A project's backup (a download) and the restore of a backup as a new project. */
export function projectBackupRoutes(fastify: FastifyInstance, deps: Deps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // The backup is checked after the caller is known to be allowed to create projects (restoreProject).
  const restore = {
    bodyLimit: BACKUP_BODY_LIMIT,
    config: { parsesInHandler: true, tokenScope: 'write' as const },
    schema: { body: projectBackup, response: { 200: projectSchema } },
  };
  app.post('/api/projects/restore', restore, async (request, reply) => {
    // The peer answers 200 with the new project (Swagger lists only 200).
    const project = await restoreProject(deps, currentUser(request), request.body);
    return reply.status(200).send(project);
  });

  projectRoutes(app, deps, async (scope) => {
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
  });
}
