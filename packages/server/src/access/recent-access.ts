import { ReadsInFlight } from '../lib/reads-in-flight';
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
  private readonly reading = new ReadsInFlight<string, unknown>();

  constructor(private readonly now: () => number = () => Date.now()) {}

  /**
   * The remembered token owner, or `read()`'s answer, remembered when found. When the memory has lapsed — for every
   * in-flight request of a busy client at once — the requests that ask while one read runs share it instead of
   * reading once each; one that asks after a forget() waits for a read of its own.
   */
  tokenThrough(digest: string, read: () => Promise<Token | undefined>): Promise<Token | undefined> {
    return this.through(this.tokens, 't', digest, read, () => true);
  }

  /** The remembered project with the user's role, or `read()`'s answer, read once for all who ask meanwhile. */
  projectThrough(projectId: number, userId: number, read: () => Promise<Project | undefined>) {
    return this.through(this.projects, 'p', `${projectId} ${userId}`, read, () => true);
  }

  /**
   * The remembered session, or `read()`'s answer, read once for all who ask meanwhile; only answers `keep` accepts
   * are remembered (a session still waiting for its second factor is read every time).
   */
  sessionThrough(
    digest: string,
    read: () => Promise<Session | undefined>,
    keep: (value: Session) => boolean,
  ): Promise<Session | undefined> {
    return this.through(this.sessions, 's', digest, read, keep);
  }

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
    this.reading.forget();
    this.tokens.clear();
    this.projects.clear();
    this.sessions.clear();
  }

  private through<T>(
    map: Map<string, Entry<T>>,
    kind: string,
    key: string,
    read: () => Promise<T | undefined>,
    keep: (value: T) => boolean,
  ): Promise<T | undefined> {
    const kept = this.fresh(map, key);
    if (kept !== undefined) return Promise.resolve(kept);
    const settled = (found: T, current: boolean) => {
      // Shared by every request that waited for it, remembered or not.
      freezeTwoLevels(found);
      if (current && keep(found)) this.remember(map, key, found);
      return found;
    };
    return this.reading.get(
      `${kind} ${key}`,
      read,
      settled as (found: unknown, current: boolean) => unknown,
    ) as Promise<T | undefined>;
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
