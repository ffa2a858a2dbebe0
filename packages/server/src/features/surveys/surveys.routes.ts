import { surveySchemaDocument } from '@signalbox/contracts';
import type { FastifyInstance } from 'fastify';
import { projectRoutes } from '../../access/project-guard';
import type { Deps } from '../../deps';
import { pathIds } from '../../http/path-params';
import { notFound } from '../../lib/errors';
import { findTemplate } from '../../tasks/store';
import { surveySchemaOf } from './survey-check';

/** Survey API under /api/project/:project_id. */
export function surveysRoutes(app: FastifyInstance, deps: Deps) {
  projectRoutes(app, deps, async (scope) => {
    // The template's survey as a JSON Schema document with its options resolved now: what the run form renders
    // and what a run's answers are checked against (any member of the project may read it).
    scope.get(
      '/templates/:template_id/survey-schema',
      { schema: { params: pathIds('template_id'), response: { 200: surveySchemaDocument } } },
      async (request) => {
        const template = await findTemplate(deps.db, request.params.template_id);
        if (!template || template.project_id !== request.project.id) throw notFound('template');
        const { doc } = await surveySchemaOf(
          deps,
          { projectId: template.project_id, templateId: template.id },
          template.survey_vars,
        );
        return doc;
      },
    );
  });
}
