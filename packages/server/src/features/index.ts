import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps';
import { alertsRoutes } from './alerts/alerts.routes';
import { appsRoutes } from './apps/apps.routes';
import { oidcRoutes } from './auth/oidc.routes';
import { totpRoutes } from './auth/totp.routes';
import { environmentsRoutes } from './environments/environments.routes';
import { healthRoutes } from './health/health.routes';
import { integrationsRoutes } from './integrations/integrations.routes';
import { inventoryRoutes } from './inventory/inventory.routes';
import { keysRoutes } from './keys/keys.routes';
import { mcpRoutes } from './mcp/mcp.routes';
import { optionListsRoutes } from './option-lists/option-lists.routes';
import { repositoriesRoutes } from './repositories/repositories.routes';
import { runnersRoutes } from './runners/runners.routes';
import { schedulesRoutes } from './schedules/schedules.routes';
import { surveysRoutes } from './surveys/surveys.routes';
import { tasksRoutes } from './tasks/tasks.routes';
import { invitesRoutes } from './team/invites.routes';
import { teamRoutes } from './team/team.routes';
import { templatesRoutes } from './templates/templates.routes';
import { usersRoutes } from './users/users.routes';
import { viewsRoutes } from './views/views.routes';

/** Route registration for every feature folder. Each feature exports `<name>Routes(app, deps)`. */
export async function registerFeatures(app: FastifyInstance, deps: Deps) {
  healthRoutes(app, deps);
  usersRoutes(app, deps);
  oidcRoutes(app, deps);
  alertsRoutes(app, deps);
  keysRoutes(app, deps);
  repositoriesRoutes(app, deps);
  inventoryRoutes(app, deps);
  environmentsRoutes(app, deps);
  templatesRoutes(app, deps);
  viewsRoutes(app, deps);
  optionListsRoutes(app, deps);
  schedulesRoutes(app, deps);
  teamRoutes(app, deps);
  invitesRoutes(app, deps);
  integrationsRoutes(app, deps);
  tasksRoutes(app, deps);
  mcpRoutes(app, deps);
  surveysRoutes(app, deps);
  appsRoutes(app, deps);
  totpRoutes(app, deps);
  runnersRoutes(app, deps);
}
