import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixtures, freshFixtures, pathIdsOf } from './support/conformance-fixtures';
import {
  ELSEWHERE,
  KNOWN_ELSEWHERE,
  NORMALIZED,
  NOT_EXERCISED,
  owner,
  PENDING_ELSEWHERE,
  rules,
  WRITE_ONLY,
} from './support/conformance-rules';
import { type Ctx, ERROR_STEPS, LOGIN, STEPS, type Step } from './support/conformance-steps';
import { testDialects } from './support/dialects';
import { createHarness } from './support/harness';
import {
  bodySchema,
  checkValue,
  exampleBody,
  exampleQuery,
  loadSwagger,
  matchingRoutes,
  type Problem,
  resolve,
  type Schema,
  type SwaggerOp,
  successCodes,
  swaggerOperations,
} from './support/swagger-spec';
import { gitRepo } from './support/task-fixtures';

/**
 * Conformance with Semaphore UI's Swagger description (test/reference/semaphore-api-docs.yml), as a contract test
 * such as dredd checks it: every operation in it but the four NOT_EXERCISED lists is sent to the real server, each
 * on fresh fixtures of its own (support/conformance-fixtures.ts: a new project with one object of every kind), with
 * the body the operation's own definition gives (its examples and properties, unchanged but where a step names the
 * deliberate difference of docs/api-differences.md it follows) and the query string from its parameters' examples. Each answer
 * must have a status the document lists for the operation and validate against the documented response schema:
 * the required fields and the ones Signalbox documents present, none null that may not be, every field of the
 * Swagger type; a field a write sends comes back as sent (NORMALIZED lists the exceptions and why). Every error
 * status the document lists is provoked the way it describes (ERROR_STEPS). Fields a definition lists that we do
 * not answer are printed at the end, not failed.
 *
 * The path ids are real ids of the fixtures (the document's x-example ids are positional placeholders that the
 * peer's own contract test rewrites the same way). Where the peer's document contradicts the peer's behaviour
 * (what its code does), the step follows the behaviour and says so beside it.
 */

const doc = loadSwagger();
const operations = swaggerOperations(doc);
const byKey = new Map(operations.map((o) => [o.key, o]));
const wanted = operations.filter((o) => !(o.key in NOT_EXERCISED));

/** The documented deliberate differences (docs/api-differences.md): every difference a step follows is a bullet of it. */
const differences = readFileSync(new URL('../../../docs/api-differences.md', import.meta.url), 'utf8');

/** A Swagger path with its `{param}`s filled. */
const fillPath = (path: string, ids: Record<string, unknown>) =>
  `${doc.basePath}${path.replace(/\{(\w+)\}/g, (_m, p: string) => encodeURIComponent(String(ids[p] ?? 999_999)))}`;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The ids a body's `*_id` fields take: the fixtures', the object's own for a PUT, the user who may join. */
function bodyIdsOf(op: SwaggerOp, pathIds: Record<string, unknown>, f: Fixtures) {
  const param = /\{(\w+)\}\/?$/.exec(op.path)?.[1];
  return {
    ...pathIdsOf(f),
    id: op.method === 'PUT' && param ? pathIds[param] : undefined,
    // A user joins the project (POST …/users): the one who is no member; a PUT names its path's user.
    user_id: op.path.includes('{user_id}') ? pathIds.user_id : f.outsider.userId,
    project_id: f.project_id,
    ssh_key_id: f.key_id,
    become_key_id: f.key_id,
    integration_id: pathIds.integration_id,
    // The peer's own contract test sends these as null (a build template, vault key and secret are other objects).
    build_template_id: undefined,
    vault_key_id: undefined,
    auth_secret_id: undefined,
  };
}

describe('Swagger operations', () => {
  it('are each exercised by one step, or listed with the reason they are not', () => {
    expect(operations).toHaveLength(94);
    for (const key of [...Object.keys(NOT_EXERCISED), ...Object.keys(PENDING_ELSEWHERE)])
      expect(byKey.has(key), `${key} is in the Swagger file`).toBe(true);
    for (const step of STEPS) expect(byKey.has(step.op), `${step.op} is in the Swagger file`).toBe(true);
    const stepped = STEPS.map((s) => s.op);
    expect(new Set(stepped).size, 'no operation is stepped twice').toBe(stepped.length);
    expect(
      wanted.map((o) => o.key).filter((k) => !stepped.includes(k)),
      'operations without a step',
    ).toEqual([]);
    // Every status the document lists is answered by some step, but those of operations not exercised.
    const answered = new Set([
      ...STEPS.map((step) => `${step.op} ${step.status ?? successCodes(byKey.get(step.op)!)[0]}`),
      ...ERROR_STEPS.map((step) => `${step.op} ${step.status}`),
    ]);
    for (const step of ERROR_STEPS)
      expect(
        byKey.get(step.op)?.op.responses?.[step.status],
        `${step.op} lists ${step.status}`,
      ).toBeDefined();
    const listed = operations.flatMap((o) =>
      Object.keys(o.op.responses ?? {}).map((code) => `${o.key} ${code}`),
    );
    expect(
      listed.filter(
        (k) => !answered.has(k) && !(k.replace(/ \d+$/, '') in NOT_EXERCISED && k !== 'GET /ws 401'),
      ),
      'documented statuses without a step',
    ).toEqual([]);
    console.log(
      `Swagger operations: ${operations.length}; stepped: ${STEPS.length}; error statuses: ${
        ERROR_STEPS.length
      }; not exercised: ${Object.keys(NOT_EXERCISED).length}; pending elsewhere: ${
        Object.keys(PENDING_ELSEWHERE).length
      }`,
    );
  });

  it("change the document's bodies only where a documented difference says so", () => {
    for (const step of STEPS) {
      if (!step.body) {
        expect(step.difference ?? step.because, `${step.op} changes no body`).toBeUndefined();
        continue;
      }
      expect(
        Boolean(step.difference) !== Boolean(step.because),
        `${step.op}: a changed body names its difference or what the document lacks`,
      ).toBe(true);
      if (step.difference)
        expect(
          differences,
          `${step.op}: "${step.difference}" is a difference of docs/api-differences.md`,
        ).toContain(`- **${step.difference}`);
    }
  });
});

describe.each(testDialects())('Swagger conformance on $name', (dialect) => {
  const c = { callers: {}, notes: {} } as Ctx;
  const problems: (Problem & { owner: string })[] = [];
  const note = (op: SwaggerOp, p: Omit<Problem, 'op'>) =>
    problems.push({ ...p, op: op.key, owner: owner(op.path) });
  /** Transactions (a step, or an error status provoked) that answered as documented. */
  let passed = 0;

  beforeAll(async () => {
    c.h = await createHarness(dialect);
    c.admin = await c.h.userClient({ admin: true, can_create_project: true });
    // The fixtures' templates run a real script of a real repository.
    c.repo = gitRepo({ 'run.sh': 'echo hello\n' });
    // The Login example's account: the one account the steps share (signing in changes nothing of it).
    const login = await c.admin.post('/api/users', {
      name: 'Login example',
      username: 'login-example',
      email: LOGIN.email,
      password: LOGIN.password,
    });
    expect(login.statusCode).toBe(201);
  });
  afterAll(async () => c.h?.close());

  /** Checks an answer against what the document says of the operation; returns the problems found. */
  function checkAnswer(op: SwaggerOp, step: Pick<Step, 'status'>, res: LightMyRequestResponse) {
    const codes = step.status ? [step.status] : successCodes(op);
    if (!codes.includes(res.statusCode)) {
      note(op, {
        at: '(status)',
        field: '',
        def: '',
        problem: `status ${res.statusCode}, Swagger lists ${codes.join(', ')}: ${res.body.slice(0, 200)}`,
        severity: 'fail',
      });
      return;
    }
    const documented = op.op.responses?.[String(res.statusCode)];
    const type = String(res.headers['content-type'] ?? '');
    const mediaType = documented?.headers?.['content-type']?.['x-example'];
    if (typeof mediaType === 'string' && !type.startsWith(mediaType.split(';')[0]!))
      note(op, {
        at: '(content-type)',
        field: '',
        def: '',
        problem: `content type ${type}, Swagger says ${mediaType}`,
        severity: 'fail',
      });
    if (res.statusCode === 204 && res.body !== '')
      note(op, { at: '(body)', field: '', def: '', problem: 'a 204 with a body', severity: 'fail' });
    const schema = documented?.schema;
    if (!schema) return;
    const expected = resolve(doc, schema).schema;
    if (expected.type === 'string') {
      if (typeof res.body !== 'string' || !res.body) note(op, nonJson('an empty body'));
      return;
    }
    if (!type.startsWith('application/json')) {
      note(op, nonJson(`content type ${type}`));
      return;
    }
    const body = res.json();
    if (Array.isArray(body) && body.length === 0)
      note(op, { at: '(body)', field: '', def: '', problem: 'an empty list', severity: 'fail' });
    for (const p of checkValue(doc, rules, op.key, schema, body)) note(op, p);
  }

  const nonJson = (problem: string) =>
    ({ at: '(body)', field: '', def: '', problem, severity: 'fail' }) as const;

  /**
   * Fails each field sent in a body and named in the response definition that does not come back as sent (only
   * reported when NORMALIZED says why it is stored otherwise). Objects and lists of objects are compared field by
   * field, on the fields their answer's definition names (not ids, not write-only secrets).
   */
  function roundTrip(op: SwaggerOp, responseSchema: Schema, body: unknown, json: unknown, at = '') {
    const { schema, def = '' } = resolve(doc, responseSchema);
    const got = json as Record<string, unknown> | undefined;
    for (const [field, sent] of Object.entries(body as Record<string, unknown>)) {
      const fieldSchema = schema.properties?.[field];
      if (sent === undefined || field === 'id' || !fieldSchema) continue;
      if (WRITE_ONLY.has(`${def}.${field}`)) continue;
      const answered = got?.[field];
      const item = fieldSchema.items && resolve(doc, fieldSchema.items).schema;
      if (
        item?.properties &&
        Array.isArray(sent) &&
        Array.isArray(answered) &&
        sent.length === answered.length
      ) {
        sent.forEach((one, i) => {
          roundTrip(op, fieldSchema.items!, one, answered[i], `${at}.${field}[${i}]`);
        });
        continue;
      }
      const object = resolve(doc, fieldSchema).schema;
      if (object.properties && isObject(sent) && isObject(answered)) {
        roundTrip(op, fieldSchema, sent, answered, `${at}.${field}`);
        continue;
      }
      if (JSON.stringify(answered) === JSON.stringify(sent)) continue;
      const text = JSON.stringify(answered) ?? 'nothing';
      const normalized = `${def}.${field}` in NORMALIZED;
      note(op, {
        at: `${at}.${field}`,
        field,
        def,
        problem: normalized
          ? `sent ${JSON.stringify(sent)}, got back ${text}`
          : `got back ${text}, not what was sent`,
        severity: normalized ? 'report' : 'fail',
      });
    }
  }

  /** The failures recorded since `before`, but the known mismatches of other folders. */
  const failuresSince = (before: number) =>
    problems
      .slice(before)
      .filter((p) => p.severity === 'fail' && !(`${p.op} ${p.at}: ${p.problem}` in KNOWN_ELSEWHERE))
      .map((p) => `${p.at}: ${p.problem}`);

  // A read changes nothing: the GET steps without a set-up of their own share one set of fixtures, every other
  // step gets a new one (a new project with one object of every kind).
  let readFixtures: Promise<Fixtures> | undefined;
  const fixturesFor = (step: Step) => {
    if (!step.op.startsWith('GET ') || step.before) return freshFixtures(c.h, c.admin, c.repo);
    readFixtures ??= freshFixtures(c.h, c.admin, c.repo);
    return readFixtures;
  };

  for (const step of STEPS) {
    (step.op in PENDING_ELSEWHERE ? it.skip : it)(`${step.op} answers as documented`, async () => {
      const op = byKey.get(step.op)!;
      const before = problems.length;
      const f = await fixturesFor(step);
      await step.before?.(c, f);
      const pathIds = { ...pathIdsOf(f), ...step.path?.(c, f) };
      const schema = bodySchema(op);
      const example = schema ? exampleBody(doc, schema, bodyIdsOf(op, pathIds, f)) : undefined;
      const body = step.body && example ? step.body(example as Record<string, unknown>, c, f) : example;
      const url = fillPath(op.path, pathIds) + (op.method === 'GET' ? exampleQuery(op) : '');
      const res = await (step.as?.(c, f) ?? c.admin).request(op.method as 'GET', url, body);
      checkAnswer(op, step, res);
      if (res.statusCode < 300) {
        const documented = op.op.responses?.[String(res.statusCode)]?.schema;
        if (op.method === 'POST' && documented && body) roundTrip(op, documented, body, res.json());
        // After a PUT, the object is read back through the GET of the same path, where there is one.
        const readBack = byKey.get(`GET ${op.path}`)?.op.responses?.['200']?.schema;
        if (op.method === 'PUT' && readBack && body) {
          const got = await c.admin.get(url);
          expect(got.statusCode, `GET ${url}`).toBe(200);
          roundTrip(op, readBack, body, got.json());
        }
      }
      if ((step.status ? [step.status] : successCodes(op)).includes(res.statusCode))
        await step.after?.(res, c, f);
      expect(failuresSince(before), `${op.method} ${url}`).toEqual([]);
      passed += 1;
    });
  }

  for (const step of ERROR_STEPS) {
    it(`${step.op} answers ${step.status} as documented`, async () => {
      const op = byKey.get(step.op)!;
      const f = await freshFixtures(c.h, c.admin, c.repo);
      await step.before?.(c, f);
      const pathIds = { ...pathIdsOf(f), ...step.path?.(c, f) };
      const schema = bodySchema(op);
      const example = schema ? exampleBody(doc, schema, bodyIdsOf(op, pathIds, f)) : undefined;
      const body = step.body && example ? step.body(example as Record<string, unknown>) : example;
      const url = fillPath(op.path, pathIds);
      const res = await (step.as?.(c) ?? c.admin).request(op.method as 'GET', url, body);
      expect(res.statusCode, `${op.method} ${url}: ${res.body}`).toBe(step.status);
      expect(res.json(), 'an error names the problem').toMatchObject({ error: expect.any(String) });
      passed += 1;
    });
  }

  it('passes every transaction, but the known mismatches of other folders', () => {
    const line = (p: Problem) => `${p.op} ${p.at}: ${p.problem}`;
    const rows = new Map<string, { owner: string; field: string; problem: string; ops: string[] }>();
    for (const p of problems.filter((x) => x.severity === 'report')) {
      const key = `${p.owner} ${p.def}.${p.field} ${p.problem}`;
      const row = rows.get(key) ?? {
        owner: p.owner,
        field: `${p.def}.${p.field}`,
        problem: p.problem,
        ops: [],
      };
      if (!row.ops.includes(p.op)) row.ops.push(p.op);
      rows.set(key, row);
    }
    if (rows.size)
      console.table(
        [...rows.values()].map((r) => ({ ...r, problem: r.problem.slice(0, 90), ops: r.ops.join('; ') })),
      );
    const transactions = STEPS.filter((s) => !(s.op in PENDING_ELSEWHERE)).length + ERROR_STEPS.length;
    console.log(
      `Swagger transactions on ${dialect.name}: ${passed} of ${transactions} answered as documented`,
    );
    expect(passed, 'transactions that answered as documented').toBe(transactions);
    const fails = problems.filter((p) => p.severity === 'fail');
    const seen = new Set(fails.map(line));
    expect(
      Object.keys(KNOWN_ELSEWHERE).filter((k) => !seen.has(k)),
      'fixed known mismatches (remove them from KNOWN_ELSEWHERE)',
    ).toEqual([]);
    expect(
      fails.filter((p) => line(p) in KNOWN_ELSEWHERE && !ELSEWHERE.has(p.owner)).map(line),
      'known mismatches in folders this test may fix',
    ).toEqual([]);
  });

  it('serves no operation pending elsewhere (remove an entry once its route exists)', () => {
    const routes = c.h.app.routeList.filter((r) => r.url.startsWith('/api/') && r.method !== 'HEAD');
    const served = Object.keys(PENDING_ELSEWHERE).filter(
      (key) => matchingRoutes(doc, byKey.get(key)!, routes).length > 0,
    );
    expect(served).toEqual([]);
  });
});
