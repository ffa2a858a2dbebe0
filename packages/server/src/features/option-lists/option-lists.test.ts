import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects } from '../../../test/support/dialects';
import { createHarness, type Harness } from '../../../test/support/harness';
import { createTeam, resourceMatrixTests, type Team } from '../../../test/support/permission-matrix';
import { expectCreated, expectForeignNotFound, lastEvents } from '../../../test/support/resource-team';
import { insertTemplate } from '../../../test/support/task-fixtures';

describe.each(testDialects())('option lists on $name', (dialect) => {
  let h: Harness;
  let team: Team;
  let other: Team;
  beforeAll(async () => {
    h = await createHarness(dialect);
    team = await createTeam(h, 'Option lists');
    other = await createTeam(h, 'Other option lists');
  });
  afterAll(async () => h?.close());

  const body = (over: object = {}) => ({
    name: `list-${Math.random().toString(36).slice(2, 8)}`,
    options: [
      { name: 'Europe', value: 'eu' },
      { name: 'America', value: 'us' },
    ],
    ...over,
  });
  const createList = async (over: object = {}, t = team) => {
    const res = await t.owner.post(`${t.base}/option_lists`, body(over));
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; name: string };
  };
  const rows = () => h.deps.db.selectFrom('option_list').selectAll().orderBy('id').execute();

  it('creates, reads, lists, updates and deletes an option list, each with its event', async () => {
    const list = await expectCreated(
      team.manager,
      `${team.base}/option_lists`,
      body({ name: 'Regions', project_id: team.projectId }),
      {
        name: 'Regions',
        project_id: team.projectId,
        options: [
          { name: 'Europe', value: 'eu' },
          { name: 'America', value: 'us' },
        ],
      },
    );
    expect((await team.guest.get(`${team.base}/option_lists/${list.id}`)).json()).toEqual(list);
    const listed = (await team.guest.get(`${team.base}/option_lists`)).json() as { id: number }[];
    expect(listed).toContainEqual(list);
    const url = `${team.base}/option_lists/${list.id}`;
    const put = await team.owner.put(url, {
      id: list.id,
      name: 'Zones',
      options: [{ name: 'Asia', value: 'ap' }],
    });
    expect(put.statusCode, put.body).toBe(204);
    expect((await team.guest.get(url)).json()).toEqual({
      id: list.id,
      project_id: team.projectId,
      name: 'Zones',
      options: [{ name: 'Asia', value: 'ap' }],
    });
    expect((await team.owner.del(url)).statusCode).toBe(204);
    expect((await team.owner.get(url)).json()).toMatchObject({ error: 'Option list not found' });
    expect(await lastEvents(h, team.projectId, 3)).toEqual([
      { object_type: 'option_list', object_id: list.id, description: 'Option list Zones deleted' },
      { object_type: 'option_list', object_id: list.id, description: 'Option list Zones updated' },
      { object_type: 'option_list', object_id: list.id, description: 'Option list Regions created' },
    ]);
    const kinds = await h.deps.db
      .selectFrom('event')
      .select('kind')
      .where('object_type', '=', 'option_list')
      .where('object_id', '=', list.id)
      .orderBy('id')
      .execute();
    expect(kinds.map((k) => k.kind)).toEqual([
      'option_list.created',
      'option_list.updated',
      'option_list.deleted',
    ]);
  });

  it('refuses a name the project already has, repeated values, too many entries and long values', async () => {
    const taken = await createList({ name: 'Taken name' });
    const before = await rows();
    const cases: [object, string][] = [
      [body({ name: ' taken NAME ' }), 'An option list with this name already exists in this project'],
      [body({ name: '' }), 'Name is required'],
      [
        body({
          options: [
            { name: 'A', value: 'x' },
            { name: 'B', value: 'x' },
          ],
        }),
        'The values of an option list must be unique',
      ],
      [
        body({ options: Array.from({ length: 1001 }, (_, i) => ({ name: `n${i}`, value: `v${i}` })) }),
        'Options must have at most 1000 entries',
      ],
      [body({ options: [{ name: 'A', value: 'v'.repeat(1001) }] }), 'Value must be at most 1000 characters'],
      [body({ options: [{ name: '', value: 'v' }] }), 'Name is required'],
    ];
    for (const [payload, error] of cases) {
      const res = await team.owner.post(`${team.base}/option_lists`, payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 200)).toBe(400);
      expect(res.json().error).toBe(error);
    }
    // Its own name is not taken by itself, another project's names are not this project's.
    const other1 = await createList({ name: 'Other name' });
    const rename = await team.owner.put(
      `${team.base}/option_lists/${other1.id}`,
      body({ name: 'TAKEN name' }),
    );
    expect(rename.statusCode).toBe(400);
    expect(rename.json().error).toBe('An option list with this name already exists in this project');
    expect(
      (await team.owner.put(`${team.base}/option_lists/${taken.id}`, body({ name: 'taken name' })))
        .statusCode,
    ).toBe(204);
    await createList({ name: 'Taken name' }, other);
    expect((await rows()).length).toBe(before.length + 2);
  });

  it('answers 404 for an option list of another project', async () => {
    const foreign = await createList({}, other);
    await expectForeignNotFound(h, team, `${team.base}/option_lists/${foreign.id}`, body());
    expect((await rows()).find((r) => r.id === foreign.id)).toBeTruthy();
  });

  it('lists the templates whose survey uses a list and refuses to delete it, naming them', async () => {
    const list = await createList({ name: 'Used list' });
    const unused = await createList({ name: 'Unused list' });
    const survey = (id: number) =>
      JSON.stringify([
        { name: 'plain', title: 'Plain', type: 'string' },
        {
          name: 'region',
          title: 'Region',
          type: 'enum',
          options_source: { type: 'option_list', option_list_id: id },
        },
      ]);
    await insertTemplate(h.deps, team.projectId, { name: 'Uses the list', survey_vars: survey(list.id) });
    // Another project's template naming the same id does not hold this project's list.
    await insertTemplate(h.deps, other.projectId, { name: 'Elsewhere', survey_vars: survey(unused.id) });
    const refs = await team.guest.get(`${team.base}/option_lists/${list.id}/refs`);
    expect(refs.json().templates).toEqual([{ id: expect.any(Number), name: 'Uses the list' }]);
    const eventsBefore = await lastEvents(h, team.projectId, 1);
    const del = await team.owner.del(`${team.base}/option_lists/${list.id}`);
    expect(del.statusCode).toBe(409);
    expect(del.json()).toMatchObject({
      error: "Can't delete the option list because it is used by the resources below",
      code: 'in_use',
      refs: { templates: [{ name: 'Uses the list' }] },
    });
    expect((await rows()).some((r) => r.id === list.id)).toBe(true);
    expect(await lastEvents(h, team.projectId, 1)).toEqual(eventsBefore);
    expect((await team.owner.del(`${team.base}/option_lists/${unused.id}`)).statusCode).toBe(204);
  });

  it('goes with its project when the project is deleted', async () => {
    const t = await createTeam(h, 'Doomed project');
    const list = await createList({}, t);
    expect((await t.owner.del(t.base)).statusCode).toBe(204);
    expect((await rows()).some((r) => r.id === list.id)).toBe(false);
  });

  describe('permission matrix', () => {
    resourceMatrixTests(
      () => team,
      'option_lists',
      () => createList(),
      () => body(),
    );
  });
});
