import { cronValidateInput, idParam, scheduleInput } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps';
import { parse } from '../../lib/errors';
import { projectRoutes } from '../projects/projects.guard';
import { assertCron, changeSchedule, createSchedule, getSchedule, removeSchedule } from './schedules.service';
import { listSchedules } from './schedules.store';

const manage = { config: { permission: 'manageProjectResources' as const } };
const scheduleId = (params: unknown) => parse(idParam, (params as { id: unknown }).id);

export function schedulesRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    scope.get('/schedules', async (request) => listSchedules(deps.db, request.project.id));

    scope.get('/schedules/:id', async (request) =>
      getSchedule(deps, request.project.id, scheduleId(request.params)),
    );

    scope.post('/schedules', manage, async (request, reply) => {
      const input = parse(scheduleInput, request.body);
      const schedule = await createSchedule(deps, request.user!, request.project.id, input);
      return reply.status(201).send(schedule);
    });

    // Checking a cron changes nothing, so any member may ask.
    scope.post('/schedules/validate', async (request, reply) => {
      const { cron_format } = parse(cronValidateInput, request.body);
      assertCron(cron_format);
      return reply.status(204).send();
    });

    scope.put('/schedules/:id', manage, async (request, reply) => {
      const id = scheduleId(request.params);
      const input = parse(scheduleInput, request.body);
      await changeSchedule(deps, request.user!, request.project.id, id, input);
      return reply.status(204).send();
    });

    scope.delete('/schedules/:id', manage, async (request, reply) => {
      await removeSchedule(deps, request.user!, request.project.id, scheduleId(request.params));
      return reply.status(204).send();
    });
  });
}
