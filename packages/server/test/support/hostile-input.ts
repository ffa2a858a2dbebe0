import { headerMatcher, headerValue, type Ids } from './api-walk';

/**
 * Case generators for the route-walking robustness test: request bodies, path parameters and query strings that
 * a hostile caller sends, and the text a response must never contain.
 */

export type Case = { label: string; body: unknown };

/** Field names the API's bodies use; "every field" bodies set all of them at once. */
export const FIELDS = [
  'name',
  'title',
  'username',
  'email',
  'password',
  'auth',
  'git_url',
  'git_branch',
  'inventory',
  'json',
  'env',
  'playbook',
  'description',
  'cron_format',
  'message',
  'role',
  'key',
  'value',
  'variable',
  'type',
  'app',
  'arguments',
  'environment',
  'start_version',
  'alert_chat',
  'auth_header',
  'match_type',
  'body_data_type',
  'method',
  'value_source',
  'login_password',
  'ssh',
  'survey_vars',
];

/** Query parameters the API reads, and a few it does not. */
export const QUERY_KEYS = [
  'sort',
  'order',
  'limit',
  'offset',
  'start',
  'end',
  'q',
  'status',
  'redirect',
  'code',
];

const every = (value: unknown) => Object.fromEntries(FIELDS.map((f) => [f, value]));
const MB = 'x'.repeat(1024 * 1024);
/**
 * `every(MB)` as JSON text, made once: 33 MB that the request would otherwise serialise again for every route
 * (0.2–0.3 s each, most of the invalid-input walk's time). The same bytes reach the server.
 */
let mbStringsText: string | undefined;
function mbStrings() {
  mbStringsText ??= JSON.stringify(every(MB));
  return mbStringsText;
}

/** Nesting `depth` levels deep, as JSON text (an array of arrays, or objects holding objects). */
export const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
export const deepObject = (depth: number, key = 'a') => `${`{"${key}":`.repeat(depth)}1${'}'.repeat(depth)}`;

/** Bodies no route may accept: each must get a 4xx and change nothing. */
export function invalidBodies(readsBody: boolean): Case[] {
  const cases: Case[] = [
    { label: 'malformed JSON', body: '{"name": "broken' },
    { label: 'NUL in every field', body: every('a\u0000b') },
    {
      label: 'NUL nested deep in a field',
      body: { name: 'n', survey_vars: [{ name: 'v', values: ['\u0000'] }] },
    },
    { label: 'NUL in a key', body: { 'na\u0000me': 'n' } },
    { label: 'NUL as the whole body', body: '"\\u0000"' },
    { label: 'JSON nested 5000 deep (arrays)', body: deepArray(5000) },
    { label: 'JSON nested 5000 deep (objects)', body: deepObject(5000) },
    { label: 'JSON nested 100000 deep (__proto__ keys)', body: deepObject(100_000, '__proto__') },
    { label: 'a field nested 3000 deep', body: `{"name":"n","survey_vars":${deepArray(3000)}}` },
  ];
  if (!readsBody) return cases;
  return [
    ...cases,
    { label: 'array body', body: '[]' },
    { label: 'string body', body: '"text"' },
    { label: 'missing fields', body: {} },
    { label: 'objects for fields', body: every({ nested: true }) },
    { label: 'arrays for fields', body: every([1, 'two']) },
    { label: 'numbers for fields', body: every(12345) },
    { label: 'booleans for fields', body: every(true) },
    { label: '1 MB strings', body: mbStrings() },
  ];
}

/**
 * Strings that are valid text but hostile: other control characters, a lone surrogate, path traversal, git
 * transport tricks (each would create `marker` if a program ran it) and quoting tricks. A route may accept or
 * refuse them, never fail on them.
 */
export function hostileStrings(marker: string): string[] {
  return [
    'a\u0001\u0007\b\u000b\u000c\u000e\u001b[31m\u001f\u007f\u0085\u200b\u2028\u2029z',
    '\r\nX-Injected: 1\r\n',
    'lone \ud800 surrogate',
    '../../etc/passwd',
    '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    '..\\..\\windows\\win.ini',
    `ext::sh -c touch% ${marker}`,
    `--upload-pack=touch ${marker}`,
    `-oProxyCommand=touch ${marker}`,
    "' OR '1'='1'; DROP TABLE project; --",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text is the hostile input.
    '${jndi:ldap://x}{{7*7}}%s%n',
  ];
}

/** Values put in place of one path parameter: out-of-range, negative, fractional, non-numeric, traversal. */
export const BAD_PATH_VALUES = [
  '99999999999999999999',
  '2147483648',
  '-1',
  '0',
  '1.5',
  'abc',
  '1e3',
  '0x1',
  '%20',
  '%00',
  'a%01b',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..%2F..%2Fetc%2Fpasswd',
  '%E0%A4%A',
  'x'.repeat(5000),
];

/** Percent-encodes text for a URL; a lone surrogate (which UTF-8 cannot carry) becomes its invalid byte form. */
export const encodeHostile = (value: string) =>
  value
    .split(LONE_SURROGATE)
    .map((part, i) => (i % 2 ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
const LONE_SURROGATE = /([\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff])/;

/** Every path parameter of a URL template. */
export const pathParams = (url: string) => [...url.matchAll(/:(\w+)/g)].map((m) => m[1]!);

/** Text a response must never carry: stack frames and database error or SQL text. */
export const LEAKS = [
  /at .*\.(ts|js|mjs|cjs):\d/,
  /select .* from/i,
  /insert into/i,
  /update .* set /i,
  /delete from/i,
  /\bER_[A-Z_]+/,
  /SQLITE_/,
  /violates/i,
  /syntax error/i,
  /node_modules/,
];

/** The strings of a body, by path (objects and arrays walked). */
export function stringPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringPaths(v, [...path, i]));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringPaths(v, [...path, k]));
  return [];
}

/** A copy of `body` with the value at `path` replaced (or removed when `value` is undefined). */
export function withValue(body: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return copy;
}

/** A copy of `body` with `{n}` in its strings replaced by `n`, for values that must be unique per request. */
export const numbered = (body: unknown, n: number): unknown =>
  JSON.parse(JSON.stringify(body).replaceAll('{n}', String(n)));

/**
 * A body each main write route accepts, so a hostile value in one field reaches the route's own code (`{n}` marks
 * values that must differ from one request to the next; see `numbered`).
 */
export function validBodies(
  ids: Ids,
  other: { userId: number; username: string; password: string },
  self: { password: string },
): Record<string, Record<string, unknown>> {
  const userId = other.userId;
  const project = `/api/project/:project_id`;
  const key = { name: 'k', type: 'login_password', login_password: { login: 'u', password: 'p4ss' } };
  const repo = { name: 'r', git_url: 'https://example.com/r.git', git_branch: 'main', ssh_key_id: ids.key };
  const inventory = { name: 'i', type: 'static', inventory: 'localhost', ssh_key_id: ids.key };
  const environment = { name: 'e', json: '{"a":"b"}', env: '{"A":"b"}', password: 'vault' };
  const template = {
    name: 't',
    app: 'bash',
    playbook: 'run.sh',
    description: 'd',
    arguments: '[]',
    git_branch: 'main',
    repository_id: ids.repositories,
    inventory_id: ids.inventory,
    environment_id: ids.environment,
  };
  const schedule = { name: 's', template_id: ids.templates, cron_format: '0 0 * * *' };
  const matcher = headerMatcher;
  const value = headerValue;
  // Names are unique per project for some kinds: each create takes a new one, an update keeps the seeded one's.
  const fresh = (body: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(body).map(([k, v]) => [k, k === 'name' || k === 'title' ? `${String(v)}-new{n}` : v]),
    );
  const both = (path: string, body: Record<string, unknown>) => ({
    [`POST ${project}/${path}`]: fresh(body),
    [`PUT ${project}/${path}/:id`]: body,
  });
  return {
    'POST /api/auth/login': { auth: other.username, password: other.password },
    // A user's projects have distinct names.
    'POST /api/projects': { name: 'p{n}' },
    [`PUT ${project}`]: { name: 'Main', alert: false, alert_chat: '' },
    'POST /api/users': {
      name: 'n',
      username: 'new{n}',
      email: 'new{n}@example.test',
      password: 'secret-pw-1',
    },
    'PUT /api/users/:id': { name: 'n', username: `admin${userId}`, email: `admin${userId}@example.test` },
    // The walker's own password: a self-change names the current one (kept, so later requests still match).
    'POST /api/users/:id/password': { password: self.password, current_password: self.password },
    [`POST ${project}/users`]: { user_id: userId, role: 'manager' },
    [`PUT ${project}/users/:user_id`]: { role: 'owner' },
    [`POST ${project}/schedules/validate`]: { cron_format: '0 0 * * *' },
    ...both('keys', key),
    ...both('repositories', repo),
    ...both('inventory', inventory),
    ...both('environment', environment),
    ...both('views', { title: 'v', position: 0 }),
    ...both('templates', template),
    ...both('schedules', schedule),
    ...both('integrations', {
      name: 'in',
      template_id: ids.templates,
      auth_method: 'none',
      auth_header: 'X-A',
    }),
    [`POST ${project}/integrations/:id/matchers`]: matcher,
    [`PUT ${project}/integrations/:id/matchers/:matcher_id`]: matcher,
    [`POST ${project}/integrations/:id/values`]: value,
    [`PUT ${project}/integrations/:id/values/:value_id`]: value,
  };
}
