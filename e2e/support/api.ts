import { randomBytes } from 'node:crypto';

/** A signed-in API client for seeding and for asserting stored state. */
export type Api = {
  cookie: string;
  get: <T = unknown>(path: string) => Promise<T>;
  post: <T = unknown>(path: string, body?: unknown) => Promise<T>;
  put: (path: string, body?: unknown) => Promise<void>;
  del: (path: string) => Promise<void>;
  status: (method: string, path: string, body?: unknown) => Promise<number>;
};

export async function login(baseUrl: string, auth: string, password: string): Promise<Api> {
  const r = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ auth, password }),
  });
  if (!r.ok) throw new Error(`login ${auth}: ${r.status} ${await r.text()}`);
  const cookie = (r.headers.getSetCookie?.() ?? [r.headers.get('set-cookie') ?? ''])
    .map((c) => c.split(';')[0])
    .join('; ');
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}/api${path}`, {
      method,
      // A cookie-signed write must be JSON (or come from the console's own origin): always say JSON.
      headers: { cookie, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res;
  };
  const json = async <T>(method: string, path: string, body?: unknown) => {
    const res = await call(method, path, body);
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
  return {
    cookie,
    get: (path) => json('GET', path),
    post: (path, body) => json('POST', path, body ?? {}),
    put: async (path, body) => void (await json('PUT', path, body ?? {})),
    del: async (path) => void (await json('DELETE', path)),
    status: async (method, path, body) => (await call(method, path, body)).status,
  };
}

export type SeedUser = { id: number; name: string; username: string; password: string };

let counter = 0;
/**
 * Creates a user through the admin API. Test files run in several workers against one shared server, each with its
 * own counter, so the generated username carries random bytes as well as the time and the counter.
 */
export async function createUser(
  admin: Api,
  fields: Partial<{ name: string; username: string; admin: boolean; can_create_project: boolean }> = {},
): Promise<SeedUser> {
  counter += 1;
  const username =
    fields.username ?? `user${Date.now().toString(36)}${randomBytes(3).toString('hex')}${counter}`;
  const password = 'Secret-pass-1';
  const user = await admin.post<{ id: number; name: string }>('/users', {
    name: fields.name ?? `User ${counter}`,
    username,
    email: `${username}@example.com`,
    password,
    admin: fields.admin ?? false,
    alert: false,
    can_create_project: fields.can_create_project ?? false,
  });
  return { id: user.id, name: user.name, username, password };
}
