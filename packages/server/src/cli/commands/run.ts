import type { TaskWithTemplate } from '@signalbox/contracts';
import { type ClientCommand, optionsHelp, stringOption } from '../command';
import { findTemplate } from '../resolve';
import { runAnswers } from '../run-vars';
import { terminalSafe } from '../terminal';
import { taskHint, watchTask } from '../watch';

export const run: ClientCommand = {
  name: 'run',
  summary: 'start a task from a template, optionally waiting for it or streaming its log',
  help: `Usage: signalbox run <template> [--project P] [--var name=value]… [--message M] [--wait | --follow]

Starts a task from the template (its id or name; --project P, an id or name, when several projects have a
template of that name). Each --var answers a survey variable, typed as the survey says (int and number: a
number; boolean: true or false; multiselect: a JSON array or values separated by commas; kv: a JSON object);
a secret variable's answer is sent as a secret (stored sealed, masked in the log). A name the survey does not
have is passed as an extra variable.

Without --wait or --follow it prints the new task and exits 0. With --wait it waits for the task to end, with
--follow it also streams the task's log to stdout as it is written; both then exit with the task's status:
  0  success
  1  failed (error) or rejected
  2  stopped
Ctrl-C stops following, not the task.

${optionsHelp([
  ['--project P', 'the project, by id or name'],
  ['--var name=value', 'a survey answer or extra variable (repeatable)'],
  ['--message M', "the task's message (shown in the history)"],
  ['--wait', 'wait for the task to end and exit with its status'],
  ['-f, --follow', 'stream the log until the task ends and exit with its status'],
])}`,
  options: {
    project: { type: 'string' },
    var: { type: 'string', multiple: true },
    message: { type: 'string' },
    wait: { type: 'boolean' },
    follow: { type: 'boolean', short: 'f' },
  },
  args: { min: 1, max: 1, names: 'a template (its id or name)' },
  async run({ api, term, values, args }) {
    const client = api();
    term.spin('Finding the template');
    const { project, template } = await findTemplate(client, args[0] ?? '', stringOption(values, 'project'));
    const answers = runAnswers((values.var as string[] | undefined) ?? [], template.survey_vars);
    term.spin(`Starting ${terminalSafe(template.name)}`);
    const task = await client.post<TaskWithTemplate>(`/project/${project.id}/tasks`, {
      template_id: template.id,
      environment: JSON.stringify(answers.environment),
      ...(Object.keys(answers.secret).length ? { secret: JSON.stringify(answers.secret) } : {}),
      ...(stringOption(values, 'message') ? { message: stringOption(values, 'message') } : {}),
    });
    term.stopSpinning();
    const follow = values.follow === true;
    if (!follow && values.wait !== true) {
      if (term.json) term.jsonOut(task);
      else {
        term.out(
          `Started task ${task.id} of ${terminalSafe(template.name)} in project ${terminalSafe(project.name)} (${task.status})`,
        );
        term.say(`Follow it with: ${taskHint(project, task.id)} --follow`);
      }
      return 0;
    }
    if (!term.json)
      term.say(
        `Started task ${task.id} of ${terminalSafe(template.name)} in project ${terminalSafe(project.name)}`,
      );
    return watchTask(client, term, project, task, { follow });
  },
};
