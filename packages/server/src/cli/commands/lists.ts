import type { Project, Template } from '@signalbox/contracts';
import { type ClientCommand, optionsHelp, stringOption } from '../command';
import { findProject, listProjects, listTemplates } from '../resolve';
import { table } from '../terminal';

export const projects: ClientCommand = {
  name: 'projects',
  summary: 'list the projects the token reaches',
  help: `Usage: signalbox projects

Lists the projects the token reaches (a token limited to some projects sees those).

${optionsHelp([])}`,
  options: {},
  args: { min: 0, max: 0, names: '' },
  async run({ api, term }) {
    term.spin('Reading projects');
    const list = await listProjects(api());
    term.stopSpinning();
    if (term.json) term.jsonOut(list);
    else if (list.length === 0) term.say('No projects (or none this token reaches)');
    else
      for (const line of table(
        ['ID', 'NAME'],
        list.map((p) => [String(p.id), p.name]),
      ))
        term.out(line);
    return 0;
  },
};

export const templates: ClientCommand = {
  name: 'templates',
  summary: 'list the templates of a project, or of every project the token reaches',
  help: `Usage: signalbox templates [--project P]

Lists the templates of project P (its id or name), or of every project the token reaches, with the survey
variables each one asks for (signalbox run … --var name=value answers them).

${optionsHelp([['--project P', 'the project, by id or name']])}`,
  options: { project: { type: 'string' } },
  args: { min: 0, max: 0, names: '' },
  async run({ api, term, values }) {
    term.spin('Reading templates');
    const projectRef = stringOption(values, 'project');
    const client = api();
    const projectsOf: Project[] = projectRef
      ? [await findProject(client, projectRef)]
      : await listProjects(client);
    const rows: { project: Project; template: Template }[] = [];
    for (const project of projectsOf)
      for (const template of await listTemplates(client, project.id)) rows.push({ project, template });
    term.stopSpinning();
    if (term.json) {
      term.jsonOut(rows.map(({ template }) => template));
      return 0;
    }
    if (rows.length === 0) {
      term.say('No templates');
      return 0;
    }
    const vars = (t: Template) =>
      t.survey_vars.map((v) => `${v.name}${v.required ? '*' : ''}${v.type ? `:${v.type}` : ''}`).join(' ');
    const header = ['ID', 'NAME', 'APP', 'SURVEY (* required)'];
    const cells = ({ template: t }: (typeof rows)[number]) => [String(t.id), t.name, t.app, vars(t)];
    const lines = projectRef
      ? table(header, rows.map(cells))
      : table(
          ['PROJECT', ...header],
          rows.map((row) => [row.project.name, ...cells(row)]),
        );
    for (const line of lines) term.out(line);
    return 0;
  },
};
