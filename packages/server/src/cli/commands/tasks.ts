import type { Project, TaskWithTemplate } from '@signalbox/contracts';
import { type ClientCommand, type Context, optionsHelp, stringOption } from '../command';
import { findTask, getTask } from '../resolve';
import { type Terminal, terminalSafe } from '../terminal';
import { watchTask } from '../watch';

const PROJECT_OPTION: [string, string] = [
  '--project P',
  "the task's project, by id or name (without it, the projects the token reaches\nare asked in turn: the API reaches a task through its project)",
];

/** A task as people read it: one field a line. */
function describe(term: Terminal, project: Project, task: TaskWithTemplate) {
  const fields: [string, string | null][] = [
    ['Task', String(task.id)],
    ['Template', `${task.tpl_alias} (id ${task.template_id})`],
    ['Project', `${project.name} (id ${project.id})`],
    ['Status', task.status + (task.status_detail ? ` (${task.status_detail})` : '')],
    ['Started by', [task.user_name, task.source && `via ${task.source}`].filter(Boolean).join(' ') || null],
    ['Message', task.message || null],
    ['Created', task.created],
    ['Started', task.start],
    ['Ended', task.end],
    ['Commit', task.commit_hash],
    ['Runner', task.runner && (task.runner.name ?? `id ${task.runner.id}`)],
  ];
  for (const [label, value] of fields)
    if (value !== null) term.out(`${`${label}:`.padEnd(12)}${terminalSafe(value)}`);
}

/** Finds the task of the command's first argument (in --project when given). */
const taskOf = ({ api, values, args }: Context) =>
  findTask(api(), args[0] ?? '', stringOption(values, 'project'));

export const task: ClientCommand = {
  name: 'task',
  summary: 'show a task, or wait for it (--wait) or stream its log (--follow) until it ends',
  help: `Usage: signalbox task <id> [--project P] [--wait | --follow]

Shows the task. With --wait it waits for the task to end, with --follow it streams the task's log from its
first line to stdout until the task ends; both exit with the task's status (0 success, 1 failed or rejected,
2 stopped). Ctrl-C stops following, not the task.

${optionsHelp([
  PROJECT_OPTION,
  ['--wait', 'wait for the task to end and exit with its status'],
  ['-f, --follow', 'stream the log until the task ends and exit with its status'],
])}`,
  options: {
    project: { type: 'string' },
    wait: { type: 'boolean' },
    follow: { type: 'boolean', short: 'f' },
  },
  args: { min: 1, max: 1, names: 'a task id' },
  async run(ctx) {
    const { term, values } = ctx;
    term.spin(`Finding task ${ctx.args[0]}`);
    const { project, task } = await taskOf(ctx);
    term.stopSpinning();
    if (values.follow || values.wait)
      return watchTask(ctx.api(), term, project, task, { follow: values.follow === true });
    if (term.json) term.jsonOut(task);
    else describe(term, project, task);
    return 0;
  },
};

/** A command that posts to a task (stop, approve, reject) and shows the task as it is afterwards. */
function taskAction(spec: {
  name: string;
  summary: string;
  help: string;
  options: ClientCommand['options'];
  /** The help of `options`. */
  optionsHelp: [string, string][];
  doing: string;
  body: (ctx: Context) => Record<string, unknown>;
  done: (task: TaskWithTemplate) => string;
}): ClientCommand {
  return {
    name: spec.name,
    summary: spec.summary,
    help: `${spec.help}\n\n${optionsHelp([PROJECT_OPTION, ...spec.optionsHelp])}`,
    options: { project: { type: 'string' }, ...spec.options },
    args: { min: 1, max: 1, names: 'a task id' },
    async run(ctx) {
      const { term } = ctx;
      term.spin(`Finding task ${ctx.args[0]}`);
      const { project, task } = await taskOf(ctx);
      term.spin(`${spec.doing} task ${task.id}`);
      const client = ctx.api();
      await client.post(`/project/${project.id}/tasks/${task.id}/${spec.name}`, spec.body(ctx));
      const after = await getTask(client, project.id, task.id);
      term.stopSpinning();
      if (term.json) term.jsonOut(after);
      else term.out(spec.done(after));
      return 0;
    },
  };
}

export const stop = taskAction({
  name: 'stop',
  summary: 'stop a task',
  help: `Usage: signalbox stop <id> [--project P] [--force]

Asks the task to stop (it ends as stopped); with --force it is killed at once.`,
  options: { force: { type: 'boolean' } },
  optionsHelp: [['--force', 'kill the task at once instead of asking it to end']],
  doing: 'Stopping',
  body: ({ values }) => ({ force: values.force === true }),
  done: (t) => `Task ${t.id} is ${t.status}`,
});

export const approve = taskAction({
  name: 'approve',
  summary: 'approve a task waiting for approval (a run an AI agent started)',
  help: `Usage: signalbox approve <id> [--project P]

Approves a task waiting for approval (a run an AI agent started through the MCP endpoint): it is queued and
runs. You need the right to run tasks in its project; a token needs the run scope.`,
  options: {},
  optionsHelp: [],
  doing: 'Approving',
  body: () => ({}),
  done: (t) => `Task ${t.id} approved (${t.status})`,
});

export const reject = taskAction({
  name: 'reject',
  summary: 'reject a task waiting for approval, with an optional reason',
  help: `Usage: signalbox reject <id> [--project P] [--reason R]

Rejects a task waiting for approval: it ends as rejected, never runs, and keeps the reason as its message.`,
  options: { reason: { type: 'string' } },
  optionsHelp: [['--reason R', "why (kept as the task's message)"]],
  doing: 'Rejecting',
  body: ({ values }) => (stringOption(values, 'reason') ? { reason: stringOption(values, 'reason') } : {}),
  done: (t) => `Task ${t.id} rejected`,
});
