import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps';
import { accessEvents, type EventBus } from '../live/bus';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A project list whose answer is the same for every member who may read it (the guard has checked that): kept
     * as the bytes sent and shared until the project changes (see SharedAnswers).
     */
    sharedAnswer?: boolean;
  }
}

/** The longest an answer is fresh even when no change reaches this instance (see SharedAnswers). */
export const SHARED_ANSWER_MS = 1000;
/**
 * How long an answer past SHARED_ANSWER_MS, with no change announced, may still go to requests that arrive while
 * another request recomputes it (a recompute takes milliseconds; this bounds a stuck one).
 */
export const STALE_ANSWER_MS = 5000;
const MAX_ANSWERS = 200;
/**
 * The bytes all kept answers may hold together. Any member chooses the query string, and each query string is its
 * own answer: without this bound, 200 variants of a large list would be hundreds of MB.
 */
export const MAX_KEPT_BYTES = 32 * 1024 * 1024;

/** The bytes sent (encoded once, not on every send), their type, and when they were kept. */
/** An answer as sent: its bytes, type and Link header (a list's next page), when it was made. */
type Answer = { body: Buffer; contentType: string; link: string | null; at: number };
/** An answer being computed by one request, since version `since` of its project; others wait for `done`. */
type Computing = {
  since: number;
  done: Promise<Answer | undefined>;
  finish: (answer: Answer | undefined) => void;
};

/**
 * The busiest project lists (templates, task history) answered from memory while nothing they show changed: under
 * many clients polling them, the database and serializer run once per change, not once per request. An answer is
 * dropped when its project changes:
 * - a write request through the API succeeded (dropped before its answer goes out, so its client reads the change):
 *   of that project, or of every project for writes outside one (a user renamed, a project restored);
 * - a task of the project was created or changed status (the engine's update on the bus);
 * - retention deleted tasks of the project.
 * Each of these goes through the event bus, so with Redis every instance hears every other's. An answer computed
 * while a change happened is not kept, and none is kept longer than SHARED_ANSWER_MS: what no event announces
 * (another instance without Redis, a `signalbox` command, a waiting task's reason) shows within that time — plus
 * one recompute: while the first request after that time recomputes the answer, the others are sent the last one
 * (nothing announced a change), so the recompute each second stalls one request rather than every client's.
 * The projects and users lists, outside any project, are kept the same way per caller under CALLER_LISTS.
 */
export class SharedAnswers {
  private readonly answers = new Map<string, Answer>();
  private keptBytes = 0;
  /** Changes seen per project, and to every project: an answer is kept only if none happened while it was made. */
  private readonly changes = new Map<number, number>();
  private everyProject = 0;

  constructor(private readonly now: () => number = () => Date.now()) {}

  version(projectId: number): number {
    return this.everyProject + (this.changes.get(projectId) ?? 0);
  }

  changed(projectId: number | null) {
    if (projectId === null) {
      this.everyProject++;
      this.answers.clear();
      this.keptBytes = 0;
      return;
    }
    this.changes.set(projectId, (this.changes.get(projectId) ?? 0) + 1);
    const prefix = `${projectId} `;
    for (const key of this.answers.keys()) if (key.startsWith(prefix)) this.drop(key);
  }

  /** The bytes the kept answers hold. */
  get bytes() {
    return this.keptBytes;
  }

  private drop(key: string) {
    const answer = this.answers.get(key);
    if (!answer) return;
    this.keptBytes -= answer.body.length;
    this.answers.delete(key);
  }

  /**
   * The answer kept for key: fresh, or past SHARED_ANSWER_MS with no change announced since (good only while
   * another request recomputes it), up to STALE_ANSWER_MS.
   */
  lookup(key: string): { answer: Answer; fresh: boolean } | undefined {
    const answer = this.answers.get(key);
    if (!answer) return undefined;
    const age = this.now() - answer.at;
    if (age < SHARED_ANSWER_MS) return { answer, fresh: true };
    if (age < STALE_ANSWER_MS) return { answer, fresh: false };
    this.drop(key);
    return undefined;
  }

  /**
   * Keeps an answer computed since version `since` of its project, unless the project changed meanwhile or it is
   * too large to keep; answers it either way, for the requests waiting for it (see `computed`).
   */
  keep(
    key: string,
    projectId: number,
    since: number,
    body: string | Buffer,
    contentType: string,
    link: string | null = null,
  ): Answer {
    const answer = {
      body: typeof body === 'string' ? Buffer.from(body) : body,
      contentType,
      link,
      at: this.now(),
    };
    if (this.version(projectId) !== since || answer.body.length > MAX_KEPT_BYTES / 4) return answer;
    this.drop(key);
    this.answers.set(key, answer);
    this.keptBytes += answer.body.length;
    // The least recently kept go first.
    while (this.answers.size > MAX_ANSWERS || this.keptBytes > MAX_KEPT_BYTES)
      this.drop(this.answers.keys().next().value as string);
    return answer;
  }

  /** Answers being computed, by key: requests for the same list wait for the one computing it. */
  private readonly computing = new Map<string, Computing>();

  /**
   * Called on a miss: `{ compute }` when this request is to compute the answer (hand `compute` to `computed` when
   * it is done), otherwise `{ wait }`, the answer the request already computing it will make (undefined: it made
   * none, e.g. an error or its client went away: then look again). A request computing since before a change of
   * the project makes no one wait: the next request computes anew.
   */
  wait(key: string, projectId: number): { wait: Promise<Answer | undefined> } | { compute: Computing } {
    const since = this.version(projectId);
    const running = this.computing.get(key);
    if (running && running.since === since) return { wait: running.done };
    let finish: (answer: Answer | undefined) => void = () => {};
    const done = new Promise<Answer | undefined>((resolve) => {
      finish = resolve;
    });
    const compute = { since, done, finish };
    this.computing.set(key, compute);
    return { compute };
  }

  /** Whether a request is computing the answer of `key` now (others asking for it wait for that one). */
  pending(key: string): boolean {
    return this.computing.has(key);
  }

  /**
   * The request computing `key` (as `compute`) is done: `answer` goes to the requests that waited for it — also one
   * too large to keep, or made while the project changed (they asked before the change: the answer is as new as
   * what they asked for), else each of them would compute it again, one after another.
   */
  computed(key: string, compute: Computing, answer?: Answer) {
    // A later request may compute the same key since a change: its entry stays.
    if (this.computing.get(key) === compute) this.computing.delete(key);
    compute.finish(answer);
  }
}

/** One cache per app (its bus): every project scope of the app shares it. */
const byBus = new WeakMap<EventBus, SharedAnswers>();

export function sharedAnswersOf(bus: EventBus): SharedAnswers {
  let answers = byBus.get(bus);
  if (!answers) {
    const created = new SharedAnswers();
    bus.on('projectChanged', ({ projectId }) => {
      created.changed(projectId);
      if (projectId !== null) created.changed(CALLER_LISTS);
    });
    for (const event of accessEvents) bus.on(event, () => created.changed(CALLER_LISTS));
    bus.on('live', (message) => {
      if (message.type === 'update') created.changed(message.project_id);
    });
    byBus.set(bus, created);
    answers = created;
  }
  return answers;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
const PROJECT_PREFIX = '/api/project/:project_id';
/**
 * Writes that change nothing a project shows: signing in and out, the caller's API tokens, and incoming webhooks
 * (a task they start is announced by its own update).
 */
const UNSHOWN_WRITES = ['/api/auth/', '/api/user/tokens', '/api/integrations/'];
/**
 * Writes announced by the update the engine publishes as they happen: a task started (its `waiting` update drops the
 * project's answers before the answer goes out). Announcing them as project changes as well would also make every
 * instance forget who its callers are and read the project's schedules again, at every task start.
 */
const ANNOUNCED_BY_THEIR_UPDATE = new Set(['POST /api/project/:project_id/tasks']);

/**
 * Every write through the API that succeeded announces a change on the bus before its answer goes out: of its
 * project (routes under /api/project/:project_id), otherwise of every project.
 */
export function registerChangeNotices(app: FastifyInstance, deps: Pick<Deps, 'bus'>) {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (READS.has(request.method) || reply.statusCode >= 400 || !request.url.startsWith('/api/'))
      return done(null, payload);
    if (UNSHOWN_WRITES.some((prefix) => request.url.startsWith(prefix))) return done(null, payload);
    const route = request.routeOptions.url ?? '';
    if (ANNOUNCED_BY_THEIR_UPDATE.has(`${request.method} ${route}`)) return done(null, payload);
    const projectId = route.startsWith(PROJECT_PREFIX)
      ? Number((request.params as { project_id?: string }).project_id)
      : Number.NaN;
    deps.bus.emit('projectChanged', { projectId: Number.isSafeInteger(projectId) ? projectId : null });
    done(null, payload);
  });
}

const STAMP = Symbol('shared answer stamp');
const MADE = Symbol('shared answer made');
type Stamped = FastifyRequest & { [STAMP]?: Computing; [MADE]?: Answer };

/**
 * Where a kept answer belongs: its project (every member the guard let in reads the same list) and its key, which
 * starts with the project's id so that a change of the project drops it.
 */
type Place = { projectId: number; key: string };
const inProject = (request: FastifyRequest): Place => ({
  projectId: request.project.id,
  key: `${request.project.id} ${request.url}`,
});

/**
 * The answers of lists outside any project that each caller reads their own way (the projects they are in, the
 * users an administrator manages) are kept under this id, never a project's (ids start at 1). They are dropped by
 * every write through the API (inside a project too: a rename or a membership shows in the projects list) and by
 * every access event, but not by task updates, which change nothing they show.
 */
export const CALLER_LISTS = 0;

/**
 * Who reads a caller list the same way: the same user, as an administrator or not (a token without the admin
 * scope acts as none), through the same set of reachable projects (a token limited to some).
 */
const callerOf = (request: FastifyRequest) => {
  const user = request.user;
  const projects = request.tokenLimits?.projectIds;
  return `${user?.id ?? 0}:${user?.admin ? 1 : 0}:${projects ? projects.join(',') : '*'}`;
};
const ofCaller = (request: FastifyRequest): Place => ({
  projectId: CALLER_LISTS,
  key: `${CALLER_LISTS} ${callerOf(request)} ${request.url}`,
});

/**
 * The hooks that answer a route from the kept answers and keep what it answers when it was computed without a
 * change in between; `placeOf` says where a request's answer belongs, or null for a request not answered this way.
 */
function sharedAnswerHooks(deps: Pick<Deps, 'bus'>, placeOf: (request: FastifyRequest) => Place | null) {
  const answers = sharedAnswersOf(deps.bus);
  const PLACE = Symbol('shared answer place');
  type Placed = Stamped & { [PLACE]?: Place };
  const preHandler = async (request: Placed, reply: FastifyReply) => {
    const place = placeOf(request);
    if (!place) return;
    request[PLACE] = place;
    const { key, projectId } = place;
    // Many clients asking for a list that just changed: one request computes it, the others wait for its answer.
    for (let waits = 0; ; waits++) {
      const kept = answers.lookup(key);
      const send = (answer: Answer) => {
        if (answer.link) reply.header('link', answer.link);
        return reply.header('content-type', answer.contentType).send(answer.body);
      };
      if (kept?.fresh) return send(kept.answer);
      // A client that left (while it was signed in, or while it waited) is not made to compute an answer for the
      // others: its response's 'close' has gone by, so nothing would end the computation and every later request
      // would wait its full bound for it, until the list changed.
      if (reply.raw.closed) return;
      const turn = answers.wait(key, projectId);
      if ('compute' in turn) {
        request[STAMP] = turn.compute;
        // Whatever ends the response — sent, failed, or its client gone — the requests waiting look again. Its
        // 'close' is the one signal every end gives: a reply whose client left runs no onResponse (nor, for a GET
        // whose request was read, onRequestAbort), nor does one the error handler hijacks after its reads were
        // stopped; until then every later request for the answer would wait its full bound.
        reply.raw.once('close', () => computed(request));
        return;
      }
      // Past its time with no change announced, and another request is recomputing it: the last answer stands.
      if (kept) return send(kept.answer);
      // Bounded: a computing request whose client went away may never answer.
      const made = await Promise.race([turn.wait, delay(SHARED_ANSWER_MS, undefined, { ref: false })]);
      if (made) return send(made);
      if (waits >= 2) break;
    }
  };
  const onSend = (request: Placed, reply: FastifyReply, payload: unknown, next: OnSendDone) => {
    const compute = request[STAMP];
    const place = request[PLACE];
    if (
      compute &&
      place &&
      reply.statusCode === 200 &&
      (typeof payload === 'string' || Buffer.isBuffer(payload))
    ) {
      const type = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
      const link = reply.getHeader('link');
      request[MADE] = answers.keep(
        place.key,
        place.projectId,
        compute.since,
        payload,
        type,
        typeof link === 'string' ? link : null,
      );
      // The bytes just encoded for keeping go out as they are: a large list is not encoded a second time.
      return next(null, request[MADE].body);
    }
    next(null, payload);
  };
  /** The computing request is done: the requests waiting get its answer (none after an error or a client gone). */
  const computed = (request: Placed) => {
    const compute = request[STAMP];
    const place = request[PLACE];
    if (compute && place) answers.computed(place.key, compute, request[MADE]);
  };
  return { preHandler, onSend };
}
type OnSendDone = (err: Error | null, payload?: unknown) => void;

/**
 * In a project scope (after its guard): answers routes configured `sharedAnswer` from the cache, and keeps what they
 * answer when it was computed without a change in between.
 */
export function serveSharedAnswers(scope: FastifyInstance, deps: Pick<Deps, 'bus'>) {
  const hooks = sharedAnswerHooks(deps, (request) =>
    request.routeOptions.config?.sharedAnswer ? inProject(request) : null,
  );
  scope.addHook('preHandler', hooks.preHandler);
  scope.addHook('onSend', hooks.onSend);
}

/**
 * Route options for a list outside any project whose answer depends only on who asks (see CALLER_LISTS): spread
 * into the route's options, after the sign-in check has run (a route hook runs after the app's).
 */
export function callerSharedAnswer(deps: Pick<Deps, 'bus'>) {
  return sharedAnswerHooks(deps, ofCaller);
}
