import { type AppInfo, appInfoSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import type { Deps } from '../../deps';
import { appList, binaryFound } from '../../lib/apps';

/**
 * `GET /api/apps`: the server's app registry (SIGNALBOX_APPS over the defaults), highest priority first, for every
 * signed-in user: the template form offers the active ones, the template list marks those whose binary is missing. How an app runs (its binary and leading options) is
 * the server's own business: only administrators see it.
 */
export function appsRoutes(app: FastifyInstance, deps: Deps) {
  const list = {
    config: { tokenScope: 'read' as const },
    schema: { response: { 200: z.array(appInfoSchema) } },
  };
  app.get('/api/apps', list, async (request) => {
    const admin = currentUser(request).admin;
    return appList(deps.config.apps).map(
      ({ id, title, icon, color, dark_color, active, priority, path, args }): AppInfo => ({
        id,
        title,
        icon,
        color,
        dark_color,
        active,
        priority,
        installed: binaryFound(path),
        ...(admin ? { path, args: [...args] } : {}),
      }),
    );
  });
}
