import { cronValidateInput, scheduleInput, scheduleSchema } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../access/auth-hook';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { noContentResponse, pathIds } from '../../http/path-params';
import { assertCron, changeSchedule, createSchedule, getSchedule, removeSchedule } from './schedules.service';
import { listSchedules } from './schedules.store';

const manage = { config: { permission: 'manageProjectResources' as const } };
const byId = { schema: { params: pathIds('id') } };

export function schedulesRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get('/schedules', { schema: { response: { 200: z.array(scheduleSchema) } } }, async (request) =>
      listSchedules(deps.db, request.project.id),
    );

    scope.get(
      '/schedules/:id',
      { schema: { ...byId.schema, response: { 200: scheduleSchema } } },
      async (request) => getSchedule(deps, request.project.id, request.params.id),
    );

    scope.post(
      '/schedules',
      { ...manage, schema: { body: scheduleInput, response: { 201: scheduleSchema } } },
      async (request, reply) => {
        const input = request.body;
        const schedule = await createSchedule(deps, currentUser(request), request.project.id, input);
        return reply.status(201).send(schedule);
      },
    );

    // Checking a cron changes nothing, so any member may ask.
    scope.post(
      '/schedules/validate',
      { config: { tokenScope: 'read' }, schema: { body: cronValidateInput, response: noContentResponse } },
      async (request, reply) => {
        const { cron_format } = request.body;
        assertCron(cron_format);
        return reply.status(204).send();
      },
    );

    scope.put(
      '/schedules/:id',
      { ...manage, schema: { ...byId.schema, body: scheduleInput, response: noContentResponse } },
      async (request, reply) => {
        const { id } = request.params;
        const input = request.body;
        await changeSchedule(deps, currentUser(request), request.project.id, id, input);
        return reply.status(204).send();
      },
    );

    scope.delete(
      '/schedules/:id',
      { ...manage, schema: { ...byId.schema, response: noContentResponse } },
      async (request, reply) => {
        await removeSchedule(deps, currentUser(request), request.project.id, request.params.id);
        return reply.status(204).send();
      },
    );
  });
}
