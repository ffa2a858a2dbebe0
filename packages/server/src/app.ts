import { existsSync } from 'node:fs';
import cookie from '@fastify/cookie';
import websocket from '@fastify/websocket';
import Fastify, {
  type FastifyContextConfig,
  type FastifyInstance,
  type FastifySchema,
  type FastifyServerOptions,
} from 'fastify';
import { registerAuth } from './access/auth-hook';
import { registerChangeNotices } from './access/shared-answers';
import { startAlerts } from './alerts/alerts';
import { createAuditForwarder, type ForwardOptions, withAuditForwarding } from './audit/forward';
import type { Config } from './config';
import { type DbHandle, migrate, openDb } from './db';
import { checkSecretKey, deploymentId } from './db/options';
import type { CoreDeps, Deps } from './deps';
import { registerFeatures } from './features';
import { authRoutes } from './features/auth/auth.routes';
import { eventsRoutes } from './features/events/events.routes';
import { closeSocketsOnShutdown, liveRoutes } from './features/live/live.routes';
import { projectBackupRoutes } from './features/project-backup/project-backup.routes';
import { projectsRoutes } from './features/projects/projects.routes';
import { runnerLinkRoutes } from './features/runner-link/runner-link.routes';
import { autorunDeploys, startTask } from './features/tasks/tasks.service';
import { createWorkflowDriver, startWorkflowRun, type WorkflowDriver } from './features/workflows';
import { stopReadsWhenClientLeaves } from './http/client-gone';
import { registerErrorHandler } from './http/error-handler';
import { loggerOptions, registerRequestIds, requestIdOf, requestLogController } from './http/logging';
import { registerMetrics } from './http/metrics';
import { registerOpenApi, responseSerializer } from './http/openapi';
import { validatePathParams } from './http/path-params';
import { registerRateLimit } from './http/rate-limit';
import { answerFrameworkError, registerRequestGuards } from './http/request-guards';
import { registerWebConsole } from './http/web-console';
import { createSecretBox, loadSecretKey } from './lib/crypto';
import { setPasswordHashCost } from './lib/password-hash';
import { EventBus } from './live/bus';
import { connectRedisBridge, liveChannelOf } from './live/redis';
import { createMetrics } from './metrics/metrics';
import { webDist } from './paths';
import type { StartTask, StartWorkflow } from './ports';
import { maxMessageBytes } from './runner-protocol/protocol';
import { createScheduler } from './scheduler/scheduler';
import { createTaskEngine } from './tasks/engine';
import { createRetention, type RetentionOptions } from './tasks/retention';
import { claimRepositoryCaches } from './tasks/run/repository-caches';

declare module 'fastify' {
  interface FastifyInstance {
    routeList: { method: string; url: string; schema?: FastifySchema; config?: FastifyContextConfig }[];
  }
}

export type BuildOptions = {
  logger?: FastifyServerOptions['logger'];
  /** An already-open database (tests); otherwise config.dbUrl is opened and closed with the app. */
  db?: DbHandle;
  /** Start the task queue, scheduler and alerts when the app is ready (default true). */
  background?: boolean;
  /** Timing of the task retention job (tests shorten the first delay). */
  retention?: RetentionOptions;
  /** Starts the tasks the scheduler and integrations ask for, in place of the tasks feature (tests record them). */
  startTask?: StartTask;
  /** Validate every response against the route's declared response schema; a mismatch fails the request (tests). */
  checkResponses?: boolean;
  /** Queue sizes and timing of audit forwarding (tests shorten them). */
  auditForward?: Partial<ForwardOptions>;
  /** The folder of the built web console served at the root (tests); null serves none. Default: the web build. */
  webDir?: string | null;
  /** How often active workflow runs are swept (delays, timeouts, other instances' tasks); default 1000 ms. */
  workflowSweepMs?: number;
};

/** Builds the Fastify app with every route (no listen). Migrations are applied before routes answer. */
type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>;

export async function buildApp(
  config: Config,
  options: BuildOptions = {},
): Promise<{ app: FastifyInstance; deps: Deps }> {
  setPasswordHashCost(config.bcryptCost);
  const trusted = config.trustProxy;
  const app = Fastify({
    logger: await loggerOptions(config, options.logger),
    logController: requestLogController(config),
    // Read from X-Request-Id only when it is a safe token (requestIdOf), so Fastify must not take the header as is.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // A hop count or proxy addresses, never `true` (which would trust every X-Forwarded-For entry). Fastify takes a
    // number too, but its types do not say so: a count becomes the function it would build from one.
    trustProxy: typeof trusted === 'number' ? (_address: string, hop: number) => hop < trusted : trusted,
    bodyLimit: 4 * 1024 * 1024,
    frameworkErrors: answerFrameworkError,
    // The peer's Swagger spells some paths with a trailing slash (/user/, /users/{id}/); both spellings answer.
    routerOptions: { ignoreTrailingSlash: true },
    // Routes declare zod schemas, checked by our own compilers: named here, Fastify never loads its JSON Schema
    // ones (ajv and fast-json-stringify, a few MB of an idle server's memory).
    // (Fastify's types describe the ajv factories; ours take the same route schema definitions.)
    schemaController: {
      compilersFactory: {
        buildValidator: (() => validatePathParams) as unknown as CompilersFactory['buildValidator'],
        buildSerializer: (() =>
          responseSerializer(
            options.checkResponses ?? false,
          )) as unknown as CompilersFactory['buildSerializer'],
      },
    },
  });
  const handle =
    options.db ??
    openDb(config.dbUrl, {
      log: app.log,
      preparedStatements: config.dbPreparedStatements,
    });
  await migrate(handle);
  const secretKey = loadSecretKey(config.secretKey, config.dataDir);
  const box = createSecretBox(secretKey);
  // Servers sharing a database must share the key too, or each would seal secrets the others cannot open.
  try {
    await checkSecretKey(handle.db, secretKey, box);
    // Repository caches of another database are never taken for this one's (ids are a database's own).
    if ((await claimRepositoryCaches(handle.db, config.dataDir)) === 'cleared')
      app.log.warn('the repository caches were of another database: removed');
  } catch (err) {
    if (!options.db) await handle.destroy();
    throw err;
  }
  const metrics = createMetrics();
  // Audit events are forwarded from the database handle every service writes through (when configured); the
  // forwarder stops, giving the queue a few seconds to go out, before the database closes.
  const forwarder = createAuditForwarder(
    config,
    {
      db: handle.db,
      dialect: handle.dialect,
      log: app.log,
      metrics: {
        forwarded: (sink, count) => metrics.auditForwarded.inc({ sink }, count),
        dropped: (sink, count) => metrics.auditDropped.inc({ sink }, count),
      },
    },
    options.auditForward,
  );
  if (forwarder) {
    metrics.watchAuditQueues(() => forwarder.queued());
    app.addHook('onClose', async () => forwarder.close());
  }
  const core: CoreDeps = {
    config,
    db: forwarder ? withAuditForwarding(handle.db, forwarder) : handle.db,
    dialect: handle.dialect,
    box,
    log: app.log,
    bus: new EventBus(),
    metrics,
  };
  // Tasks start through the tasks feature (validation, storage), which hands them to the engine; the engine
  // reports each finished run back, and a successful build autoruns its deploys.
  // A finished task of a workflow run moves its run on (the driver is made once the deps are).
  let workflows: WorkflowDriver | null = null;
  const tasks = createTaskEngine(core, {
    onRunFinished: async (run) => {
      await autorunDeploys({ ...core, startTask: taskStarter }, run);
      await workflows?.taskFinished(run.taskId);
    },
  });
  const taskStarter: StartTask =
    options.startTask ??
    ((projectId, input, origin) => startTask({ ...core, tasks }, projectId, input, origin));
  // Called only once the app runs, when `deps` exists.
  const workflowStarter: StartWorkflow = (projectId, workflowId, survey, origin) =>
    startWorkflowRun(
      deps,
      projectId,
      workflowId,
      { message: origin.message ?? '', survey },
      {
        userId: null,
        source: origin.source,
        scheduleId: origin.scheduleId ?? null,
        integrationId: origin.integrationId ?? null,
        interactive: false,
      },
    );
  const deps: Deps = Object.freeze({
    ...core,
    tasks,
    startTask: taskStarter,
    startWorkflow: workflowStarter,
    scheduler: createScheduler({ ...core, startTask: taskStarter, startWorkflow: workflowStarter }),
  });
  workflows = createWorkflowDriver(deps, { intervalMs: options.workflowSweepMs });
  // Names this deployment's channel and keys in a Redis other deployments may share.
  const redisPrefix = config.redisUrl ? (config.redisPrefix ?? (await deploymentId(handle.db))) : undefined;
  // Live events fan out across instances through Redis when configured; closed after the tasks (preClose) so
  // their last updates still go out.
  if (config.redisUrl && redisPrefix) {
    const redis = await connectRedisBridge(deps.bus, config.redisUrl, app.log, {
      channel: liveChannelOf(redisPrefix),
    });
    app.addHook('onClose', async () => redis.close());
  }
  if (!options.db) app.addHook('onClose', async () => handle.destroy());

  // Every registered route, for the robustness tests that walk the whole API and the API description's coverage test.
  const routes: FastifyInstance['routeList'] = [];
  app.decorate('routeList', routes);
  app.addHook('onRoute', (route) => {
    // `config` is read when asked for: plugins' own onRoute hooks, which run after this one, may still change it.
    for (const method of [route.method].flat())
      routes.push({
        method,
        url: route.url,
        schema: route.schema,
        get config() {
          return route.config;
        },
      });
  });
  registerRequestIds(app);
  // Before the sign-in check: its session read is one of the reads a request that lost its client stops. Not on
  // SQLite, whose statements cannot be cancelled: the request context it needs costs every request (Node 20's
  // AsyncLocalStorage hooks every promise), for nothing there.
  if (handle.dialect !== 'sqlite') stopReadsWhenClientLeaves(app);
  registerErrorHandler(app);
  // The API description first: it describes the routes registered after it.
  await registerOpenApi(app, { checkResponses: options.checkResponses });
  registerMetrics(app, deps);
  await app.register(cookie);
  // Runner sockets carry output batches up to maxMessageBytes; the live socket holds its clients to its own 64 KiB.
  await app.register(websocket, {
    options: { maxPayload: maxMessageBytes },
    preClose: closeSocketsOnShutdown,
  });
  // Terraform's http backend locks and unlocks a state with these (the built-in state backend).
  app.addHttpMethod('LOCK', { hasBody: true });
  app.addHttpMethod('UNLOCK', { hasBody: true });
  registerRequestGuards(app, config);
  registerAuth(app, deps);
  // Before the routes it counts: it adds its hook to each route registered after it.
  await registerRateLimit(app, config, { redisPrefix });
  registerChangeNotices(app, deps);
  liveRoutes(app, deps);
  runnerLinkRoutes(app, deps);

  authRoutes(app, deps);
  projectsRoutes(app, deps);
  projectBackupRoutes(app, deps);
  eventsRoutes(app, deps);
  await registerFeatures(app, deps);

  if (options.background !== false) {
    let stopAlerts = () => {};
    const retention = createRetention(deps, options.retention);
    app.addHook('onReady', async () => {
      // Only events of this instance: a task result is alerted once, not once per instance Redis relays it to.
      stopAlerts = deps.bus.localListeners(() => startAlerts(deps));
      await deps.tasks.start();
      await deps.scheduler.start();
      workflows?.start();
      retention.start();
    });
    app.addHook('preClose', async () => {
      await retention.close();
      await workflows?.close();
      await deps.scheduler.close();
      await deps.tasks.close();
      // After the drain: tasks that finish within the shutdown grace still send their alerts.
      stopAlerts();
    });
  }

  await registerWebConsole(
    app,
    options.webDir !== undefined ? options.webDir : existsSync(webDist) ? webDist : null,
  );
  return { app, deps };
}
