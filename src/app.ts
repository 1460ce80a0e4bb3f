// buildApp returns the whole service as a Fastify instance that never listens: server.ts, the
// tests, the CLI and the benchmark all build the same app.
import { readFile } from 'node:fs/promises';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/error-handling.ts';
import { registerBaseSecurityHeaders } from './http/security-headers.ts';
import { registerRequestId, requestId } from './http/request-id.ts';
import { registerJsonParser } from './http/json-nesting.ts';
import { registerMethodNotAllowed } from './http/method-not-allowed.ts';
import { checkOffered } from './http/negotiate.ts';
import { statusRoutes } from './status/status.routes.ts';
import { registerOpenApi } from './api/v0/openapi/openapi.ts';
import { registerMetrics } from './metrics/metrics.ts';
import { PurgeMetrics } from './metrics/purge-metrics.ts';
import { apiV0 } from './api/v0/index.ts';
import { createGate } from './access/gate.ts';
import { createEarlyAnswers } from './api/v0/rest/early-answers.ts';
import { combineEarlyAnswers, earlyAnswersServer, type EarlyAnswers } from './http/server-factory.ts';
import { MCP_BODY_LIMIT, MCP_PATH, mcpRoutes } from './mcp/mcp.routes.ts';
import { createMcpEarlyAnswers } from './mcp/mcp.early.ts';
import { ToolResults } from './mcp/mcp.results.ts';
import { ogcRoutes, OGC_PREFIX } from './api/ogc/ogc.routes.ts';
import { llmsTxtRoute } from './mcp/llms-txt.ts';
import { secretScanningRoutes } from './api/secret-scanning/secret-scanning.routes.ts';
import { registerSessions } from './auth/session.plugin.ts';
import { everyInterval, scheduleSessionSweep, type Every } from './auth/session-sweep.ts';
import { scheduleChangePruning } from './changes/change-retention.ts';
import { registerGraphql } from './graphql/index.ts';
import { authRoutes } from './auth/auth.routes.ts';
import { webRoutes } from './web/web.routes.ts';
import { STATIC_DIR } from './web/static.ts';
import { connectRedis, redisConfigured, redisKeyPrefix, type RedisClient } from './redis.ts';
import { Counter } from './access/rate-limit.ts';
import { ResponseCache } from './api/v0/rest/response-cache.ts';
import type { Timers } from './access/known-keys.ts';
import { SharedChanges } from './announcements/heard.ts';
import { memory } from './memory-budget.ts';
import { keptSchemaCompilers } from './http/schema-compilers.ts';
import type { DataVersionWatcher } from './announcements/data-version.ts';
import { ChangeHub, type Every as HubEvery } from './changes/change-hub.ts';
import type { Lookup } from './webhooks/webhook-targets.ts';

export interface AppOptions {
  config: Config;
  database: Database;
  /** A pino logger to use instead of one built from the config (server.ts shares its own; tests capture logs). */
  logger?: FastifyBaseLogger;
  /**
   * The app's time in epoch milliseconds: the rate limit's and the brute-force guard's windows, and API keys' expiry
   * (tests fix it or move it). Default: Date.now.
   */
  clock?: () => number;
  /** The timer of periodic work (the sweep of expired sessions, the change log's pruning); tests run it by hand. */
  every?: Every;
  /** The time and waits of the brute-force guard's memory of known keys (tests pass a fake). */
  timers?: Timers;
  /** The timer of the change streams' poll and heartbeat (changes/change-hub.ts); tests beat by hand. */
  streamEvery?: HubEvery;
  /** How webhook targets' names are resolved (tests answer without DNS); the system's resolver by default. */
  webhookLookup?: Lookup;
}

// Never log credentials: API keys, cookies, tokens.
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-csrftoken"]',
  'res.headers["set-cookie"]',
];

export async function buildApp({
  config,
  database,
  logger,
  clock = Date.now,
  every,
  timers,
  webhookLookup,
  streamEvery,
}: AppOptions) {
  // Cached hits answered before the routes (api/v0/rest/early-answers.ts), once the REST scope is built.
  const answers: { early?: EarlyAnswers } = {};
  let closing = false;
  const app = Fastify({
    serverFactory: earlyAnswersServer(() => answers.early),
    ...(logger
      ? { loggerInstance: logger }
      : { logger: { level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } } }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    // X-Request-Id: kept when plain, else made (http/request-id.ts); `reqId` of every log line of the request.
    genReqId: requestId,
    requestIdHeader: false,
    // Let requests finish on close; idle keep-alive sockets are closed at once.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    bodyLimit: 1024 * 1024,
    // The client address (rate limits, the brute-force guard) from X-Forwarded-For only behind trusted proxies.
    trustProxy: trustProxyOption(config.trustProxy),
    frameworkErrors: frameworkErrors(config.isProduction),
    clientErrorHandler: clientErrorHandler(config.isProduction),
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: true, useDefaults: true, allErrors: true } },
    // Fastify's own compilers, each schema compiled once per process (http/schema-compilers.ts).
    schemaController: { compilersFactory: keptSchemaCompilers() },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('config', config);
  // One budget per process (the memos are the modules' own): the last app built sets it.
  memory.configure(config.cacheMemoryMb * 2 ** 20);
  app.decorate('database', database);
  const redis = redisConfigured(config) ? connectRedis(config) : undefined;
  const prefix = redisKeyPrefix(config);
  const changes = new SharedChanges(database.db, app.log, redis, prefix);
  // Read replicas (DATABASE_REPLICA_URLS, db/server/replicas.ts): every reading of the data version tells them the primary's
  // WAL position, which a replica must have replayed to take reads.
  changes.dataVersion.positions = database.replicas;
  database.replicas?.start(app.log);
  await changes.start();
  // The stream's one poller (GET /api/v0/changes/stream): woken whenever the data version moves, here or elsewhere.
  const hub = new ChangeHub(database.db, app.log, { clock, ...(streamEvery ? { every: streamEvery } : {}) });
  changes.dataVersion.onChange(() => void hub.wake());
  hub.start();
  const shared: SharedState = {
    redis,
    counter: new Counter(redis, { prefix, log: app.log }),
    changes,
    watcher: changes.dataVersion,
    cache: new ResponseCache(),
    clock,
    hub,
    webhookLookup,
    purges: new PurgeMetrics(),
  };
  app.decorate('shared', shared);
  scheduleSessionSweep(app, every);
  // The change log's retention (CHANGES_RETENTION_DAYS), on the app's clock and timer.
  const pruning = scheduleChangePruning({
    db: database.db,
    days: config.changesRetentionDays,
    now: clock,
    every: every ?? everyInterval,
    log: app.log,
  });
  app.addHook('onClose', () => pruning.stop());
  const unwatch = logEmbeddedWorker(app.log, database);
  app.addHook('onClose', async () => {
    unwatch();
    await changes.stop();
    database.replicas?.stop();
    shared.counter.close();
    redis?.disconnect();
  });

  registerRequestId(app);
  registerErrorHandling(app, registerMethodNotAllowed(app));
  // A route of one representation (`config.offers`) refuses a `format` or an Accept it cannot answer (issue 45).
  app.addHook('onRequest', (request, _reply, done) => {
    const offers = request.routeOptions.config.offers;
    if (!offers) return done();
    try {
      checkOffered(request, offers);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
  registerBaseSecurityHeaders(app);
  registerJsonParser(app);
  // Before every route, so that its onResponse hook sees them all.
  const httpMetrics = registerMetrics(app);
  await registerOpenApi(app, await readFile(new URL('favicon.svg', STATIC_DIR)));
  await app.register(statusRoutes);
  // Cookies, sessions and CSRF only where people sign in: GraphQL, the OAuth routes, /csrf/ and the
  // web pages. The REST API authenticates by X-API-Key alone and never runs their hooks.
  await app.register(async (signedIn) => {
    await registerSessions(signedIn);
    await registerGraphql(signedIn);
    await signedIn.register(authRoutes);
    await signedIn.register(webRoutes);
  });
  // One gate (X-API-Key, then the rate limit) for the REST API and the MCP endpoint, whose tools call the REST API.
  const gate = createGate(app, { changes, counter: shared.counter, clock, timers });
  await app.register(apiV0, { prefix: '/api/v0', changes, cache: shared.cache, gate });
  app.addHook('preClose', async () => {
    closing = true;
    // Open streams would hold the server open: they end now (clients reconnect to another instance).
    await hub.stop();
  });
  answers.early = createEarlyAnswers({
    config,
    gate: gate.early,
    cache: shared.cache,
    metrics: httpMetrics,
    log: app.log,
    closing: () => closing,
  });
  const toolResults = new ToolResults(app.shared.watcher, config.responseCache);
  const mcpEarly = createMcpEarlyAnswers({
    config,
    gate: gate.early,
    results: toolResults,
    path: MCP_PATH,
    bodyLimit: MCP_BODY_LIMIT,
    metrics: httpMetrics,
    log: app.log,
    closing: () => closing,
  });
  answers.early = combineEarlyAnswers(answers.early, mcpEarly);
  await app.register(mcpRoutes, { gate, results: toolResults });
  // OGC API – Features: the chapters and upcoming events for GIS clients, behind the same gate.
  await app.register(ogcRoutes, { prefix: OGC_PREFIX, gate });
  await app.register(llmsTxtRoute);
  // GitHub's secret-scanning reports of published keys: signed by GitHub, no API key.
  await app.register(secretScanningRoutes);
  return app;
}

/**
 * The embedded database's worker dying and coming back (pglite-supervisor.ts), in this app's log. The messages
 * carry PGlite's reason and the attempt, never a query or its parameters.
 */
function logEmbeddedWorker(log: FastifyBaseLogger, database: Database): () => void {
  const embedded = database.embedded;
  if (!embedded) return () => {};
  const crashed = ({ reason, restartInMs }: { reason: string; restartInMs?: number }) =>
    restartInMs === undefined
      ? log.error({ reason }, 'the embedded database stopped and cannot be restarted (in memory): /livez answers 503')
      : log.error({ reason, restartInMs }, 'the embedded database stopped: restarting it');
  const restarted = ({ attempt }: { attempt: number }) => log.warn({ attempt }, 'the embedded database restarted');
  const failed = ({
    attempt,
    reason,
    restartInMs,
    state,
  }: {
    attempt: number;
    reason: string;
    restartInMs: number;
    state: string;
  }) =>
    (state === 'failed' ? log.error.bind(log) : log.warn.bind(log))(
      { attempt, reason, restartInMs, state },
      'the embedded database could not be restarted: trying again',
    );
  embedded.on('crashed', crashed).on('restarted', restarted).on('restart-failed', failed);
  return () => embedded.off('crashed', crashed).off('restarted', restarted).off('restart-failed', failed);
}

/** A hop count as the function Fastify makes of one (its types leave numbers out). */
function trustProxyOption(trust: Config['trustProxy']) {
  if (typeof trust !== 'number') return trust;
  return (_address: string, hop: number) => hop < trust;
}

/** What this instance shares with the others (through Redis and the database), read by status, metrics and the lists. */
export interface SharedState {
  /** Present when Redis is configured (REDIS_URL, or REDIS_SENTINELS); commands fail fast while it is down. */
  redis: RedisClient | undefined;
  counter: Counter;
  /** What other instances changed, and how this one tells them (GraphQL revocations, the admin channel). */
  changes: SharedChanges;
  /** The data version this instance serves (changes.dataVersion). */
  watcher: DataVersionWatcher;
  cache: ResponseCache;
  /** The app's time (AppOptions.clock). */
  clock: () => number;
  /** The streams of changes of this instance and their poller. */
  hub: ChangeHub;
  /** AppOptions.webhookLookup. */
  webhookLookup: Lookup | undefined;
  /** The edge's purges by this instance (src/edge/, started by server.ts), for /metrics. */
  purges: PurgeMetrics;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    shared: SharedState;
  }
}
