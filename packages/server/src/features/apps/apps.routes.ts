import { type AppInfo, appInfoSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps';
import { appList } from '../../lib/apps';
import { currentUser } from '../auth/auth.hook';

/**
 * `GET /api/apps`: the server's app registry (SIGNALBOX_APPS over the defaults), highest priority first, for every
 * signed-in user: the template form offers the active ones. How an app runs (its binary and leading options) is
 * the server's own business: only administrators see it.
 */
export function appsRoutes(app: FastifyInstance, deps: Deps) {
  app.get('/api/apps', { schema: { response: { 200: z.array(appInfoSchema) } } }, async (request) => {
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
        ...(admin ? { path, args: [...args] } : {}),
      }),
    );
  });
}
