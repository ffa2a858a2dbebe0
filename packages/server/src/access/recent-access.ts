import { accessEvents, type EventBus } from '../live/bus';

/** The longest a remembered lookup is used when no event announced a change (see RecentAccess). */
export const RECENT_ACCESS_MS = 1000;
const MAX_ENTRIES = 2000;

type Entry<T> = { value: T; at: number };

/**
 * The lookups every project request makes — who a session or an API token belongs to, and the project with the
 * caller's role in it — remembered for a moment, so a client polling a list does not cost two or three database
 * round trips per request. Only found answers are kept (an unknown token or session always reaches the database),
 * keyed by the token's or session cookie's digest, never the secret itself.
 *
 * Everything is forgotten at once when access may have changed: a token revoked, sessions or a user ended, a
 * membership granted or revoked, and any write through the API (the project change notice). These go through
 * the event bus, so with Redis every instance forgets on every other's change. What no event announces (a
 * `signalbox` command, another instance without Redis) holds for at most RECENT_ACCESS_MS; a token's own expiry
 * is checked on every use.
 */
export class RecentAccess<Token, Project, Session = unknown> {
  private readonly tokens = new Map<string, Entry<Token>>();
  private readonly projects = new Map<string, Entry<Project>>();
  private readonly sessions = new Map<string, Entry<Session>>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  token(digest: string): Token | undefined {
    return this.fresh(this.tokens, digest);
  }

  rememberToken(digest: string, value: Token) {
    this.remember(this.tokens, digest, value);
  }

  session(digest: string): Session | undefined {
    return this.fresh(this.sessions, digest);
  }

  rememberSession(digest: string, value: Session) {
    this.remember(this.sessions, digest, value);
  }

  project(projectId: number, userId: number): Project | undefined {
    return this.fresh(this.projects, `${projectId} ${userId}`);
  }

  rememberProject(projectId: number, userId: number, value: Project) {
    this.remember(this.projects, `${projectId} ${userId}`, value);
  }

  forget() {
    this.tokens.clear();
    this.projects.clear();
    this.sessions.clear();
  }

  private fresh<T>(map: Map<string, Entry<T>>, key: string): T | undefined {
    const entry = map.get(key);
    if (!entry) return undefined;
    const age = this.now() - entry.at;
    if (age >= 0 && age < RECENT_ACCESS_MS) return entry.value;
    map.delete(key);
    return undefined;
  }

  private remember<T>(map: Map<string, Entry<T>>, key: string, value: T) {
    freezeTwoLevels(value);
    map.delete(key);
    map.set(key, { value, at: this.now() });
    if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as string);
  }
}

/** Kept values are shared by every request that reads them: none may change one for the others. */
function freezeTwoLevels(value: unknown) {
  if (typeof value !== 'object' || value === null) return;
  for (const inner of Object.values(value))
    if (typeof inner === 'object' && inner !== null) Object.freeze(inner);
  Object.freeze(value);
}

/** The events after which a remembered lookup may be wrong: access changed, or anything written through the API. */
const FORGET_ON = [...accessEvents, 'projectChanged'] as const;

const byBus = new WeakMap<EventBus, RecentAccess<unknown, unknown, unknown>>();

/** One memory per app (its bus), forgotten on every access event of the bus. */
export function recentAccessOf<Token, Project, Session = unknown>(
  bus: EventBus,
): RecentAccess<Token, Project, Session> {
  let recent = byBus.get(bus);
  if (!recent) {
    const created = new RecentAccess<unknown, unknown, unknown>();
    for (const event of FORGET_ON) bus.on(event, () => created.forget());
    byBus.set(bus, created);
    recent = created;
  }
  return recent as RecentAccess<Token, Project, Session>;
}
