import type { Template } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { initialAnswers, type SurveyField } from '../surveys';
import { newRunValues, rerunValues, validateRun } from './validate-run';

const surveyVar = (name: string, type: Template['survey_vars'][number]['type'], required = false) => ({
  name,
  title: name,
  description: '',
  type,
  required,
  values: [],
  default_value: '',
});

const template = {
  id: 4,
  project_id: 1,
  name: 'Deploy',
  type: '',
  app: 'bash',
  inventory_id: null,
  git_branch: null,
  arguments: null,
  allow_override_args_in_task: false,
  allow_override_branch_in_task: false,
  survey_vars: [
    surveyVar('who', 'string', true),
    surveyVar('count', 'int'),
    surveyVar('token', 'secret', true),
  ],
  task_params: {},
} as unknown as Template;

/** The run form's fields of that survey, as its schema gives them. */
const field = (name: string, type: SurveyField['type'], required = false): SurveyField => ({
  name,
  type,
  title: name,
  description: '',
  required,
  secret: type === 'secret',
  options: null,
  optionsError: null,
  visibleWhen: null,
});
const fields = [field('who', 'string', true), field('count', 'int'), field('token', 'secret', true)];

describe('a re-run', () => {
  it("starts from the task's answers, asks the secret again and runs the task's commit", () => {
    const values = rerunValues(template, {
      id: 17,
      message: 'first run',
      commit_hash: 'abc1234def',
      environment: JSON.stringify({ who: 'world', count: 12, EXTRA: 'kept' }),
      params: { debug: false, stack: 'prod' },
    });
    expect(values).toMatchObject({ message: 'first run', commit_of_task: 17 });
    // The dialog fills the answers once the survey's schema is here: the secret is asked again.
    const survey = initialAnswers(fields, values.earlierSurvey);
    expect(survey).toEqual({ who: 'world', count: '12', token: '' });
    // Without the secret nothing is sent for it (the server says it is required).
    const without = validateRun(template, { ...values, survey }, fields);
    expect(without.errors).toEqual({});
    expect(without.body).not.toHaveProperty('secret');
    const { body } = validateRun(template, { ...values, survey: { ...survey, token: 's3cret' } }, fields);
    expect(body).toMatchObject({
      template_id: 4,
      message: 'first run',
      commit_of_task: 17,
      params: { stack: 'prod' },
      secret: JSON.stringify({ token: 's3cret' }),
    });
    expect(JSON.parse(String(body?.environment))).toEqual({ who: 'world', count: 12, EXTRA: 'kept' });
    // The branch head instead: no commit is sent.
    const head = validateRun(
      template,
      { ...values, commit_of_task: null, survey: { ...survey, token: 'x' } },
      fields,
    );
    expect(head.body).not.toHaveProperty('commit_of_task');
  });

  it('offers no commit of a task that never checked one out, and a new run sends none', () => {
    expect(rerunValues(template, { id: 3, message: '' }).commit_of_task).toBeNull();
    const fresh = newRunValues(template);
    const { body } = validateRun(
      template,
      { ...fresh, survey: { who: 'me', count: '', token: 't' } },
      fields,
    );
    expect(body).not.toHaveProperty('commit_of_task');
    expect(body).not.toHaveProperty('params');
  });
});
