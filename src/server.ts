// Starts the service: config, database, app, listen, and a graceful stop on SIGTERM/SIGINT.
import pino from 'pino';
import { ConfigError, loadConfig, loadEnvFile, type Config } from './config.ts';
import { availableCores } from './cores.ts';
import { releaseGazetteer } from './data/geocode/geocode.gazetteer.ts';
import { buildApp, REDACTED_PATHS } from './app.ts';
import { openConfiguredDatabase, prepareDatabase } from './startup.ts';
import { startSyncScheduler } from './data/scheduler/sync.scheduler.ts';
import { startDumpBuilds } from './dumps/dumps.background.ts';
import { startWebhookDeliveries } from './webhooks/webhook-delivery.ts';
import { withWebhookSecretsKey } from './webhooks/secrets-key.ts';
import { startEdgePurge } from './edge/edge-purge.ts';
import { createPurger } from './edge/edge-purgers.ts';
import { DUMPS_TAG } from './edge/edge-tags.ts';
import { DUMPS } from './api/v0/resources.ts';
import { openAdminChannel, type AdminChannel } from './commands/admin-channel.ts';
import { reportFailure, reportServerLife, reportStart } from './commands/server-start.ts';
import { DatabaseMissingError } from './startup.queries.ts';
import { describeError, explainEmbeddedFailure } from './db/embedded/disk-space.ts';
import { withPoolerHint } from './db/server/pool-mode.ts';
import { listenProbe } from './http/listen-probe.ts';

let config: Config;
try {
  loadEnvFile();
  // On the embedded database without WEBHOOK_SECRETS_KEY, the data folder's own key (webhooks/secrets-key.ts).
  config = await withWebhookSecretsKey(loadConfig());
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}

// On the embedded database a `cds --wait-for-server` may be waiting for this start: it reads how it goes there.
if (!config.databaseUrl) reportServerLife(config.dataDir);

const log = pino({ level: config.logLevel, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
const started = performance.now();

// The address first: a busy port or a wrong HOST stops the start before the database is opened (listen-probe.ts).
const unusable = listenProblem(await listenProbe(config.port, config.host));
if (unusable) cannotListen(unusable);

const database = await openConfiguredDatabase(config, config.databaseStatementTimeoutMs, config.lists).catch(
  (error: unknown) => fail('cannot open the database', error),
);
await prepareDatabase(database, config, log).catch(async (error: unknown) => {
  // Closed first (an embedded database holds DATA_DIR's lock); what it says on closing adds nothing.
  await database.close().catch(() => {});
  return fail('cannot prepare the database', error);
});
// What the first start's import used to place the chapters is not kept for the server's life.
releaseGazetteer();
const app = await buildApp({ config, database, logger: log });

try {
  await app.listen({ port: config.port, host: config.host });
} catch (error) {
  // The app first: its background parts (the change stream's poll) stop before the database they read closes.
  await app.close().catch(() => {});
  await database.close();
  const why = listenProblem((error as NodeJS.ErrnoException).code);
  if (why) cannotListen(why);
  await fail(`cannot listen on ${config.host}:${config.port}`, error);
}
// The pools as sized for the cores this process may use (a container's CPU quota counts: cores.ts).
log.info(
  {
    startupMs: Math.round(performance.now() - started),
    database: database.kind,
    node: process.version,
    cores: availableCores(),
    lists: { poolSize: config.lists.poolSize, queueLength: config.lists.queueLength },
  },
  'ready',
);
// Node 20's V8 now and then traps inside the embedded database (docs/decisions.md, "pglite-trap"): the query fails with
// a 503 and the database restarts (db/embedded/pglite-worker.ts). `npm start` and `cds` run on the Node 24 that
// `npm install` brings (bin/current-node.js); here only when there is none, or EMBEDDED_NODE=system: say so once.
if (database.kind === 'pglite' && Number(process.versions.node.split('.')[0]) < 22)
  log.warn(
    { node: process.version },
    'Node 20 is end-of-life and its V8 now and then fails inside the embedded database (a 503, then a restart): use Node 22 or 24',
  );
const scheduler = startSyncScheduler({ database, config, log });
// The edge's purges (EDGE_PURGE, docs/edge.md): this instance's share of the purge queue (edge/edge-purge.ts).
const purger = createPurger(config.edgePurge);
const edge = purger
  ? startEdgePurge({
      db: database.db,
      purger,
      metrics: app.shared.purges,
      log,
      watcher: app.shared.watcher,
      beforePurge: () => app.shared.watcher.refresh(),
    })
  : undefined;
// The bulk dumps, rebuilt in the background whenever the data version moves (GET /api/v0/dumps/).
const dumps = config.dumpsDir
  ? startDumpBuilds({
      database,
      dir: config.dumpsDir,
      dumps: DUMPS,
      watcher: app.shared.watcher,
      log,
      onBuilt: () =>
        void edge?.request([DUMPS_TAG]).catch((error: unknown) => log.warn({ err: error }, 'dumps purge not asked')),
    })
  : undefined;

// Webhooks: this instance's share of the delivery queue (webhooks/webhook-delivery.ts).
if (config.webhooks.allowPrivate)
  log.warn(
    'WEBHOOKS_ALLOW_PRIVATE=true: webhooks may be sent over http and to loopback, private and link-local addresses',
  );
const webhooks = startWebhookDeliveries({
  db: database.db,
  settings: config.webhooks,
  log,
  watcher: app.shared.watcher,
});

let stopping = false;
let adminChannel: AdminChannel | undefined;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'stopping: finishing in-flight requests');
  const timer = setTimeout(() => {
    log.error('shutdown timed out; exiting');
    process.exit(1);
  }, config.shutdownTimeoutMs);
  timer.unref();
  try {
    await scheduler?.stop();
    await dumps?.stop();
    await webhooks.stop();
    await edge?.stop();
    await adminChannel?.close();
    await app.close();
    await database.close();
    log.info('stopped');
    process.exit(0);
  } catch (error) {
    log.error({ err: error }, 'error while stopping');
    process.exit(1);
  }
}
process.once('SIGTERM', () => void stop('SIGTERM'));
process.once('SIGINT', () => void stop('SIGINT'));

// The embedded database is this process's alone: `cds` commands reach it through the admin channel, opened once
// HTTP listens (so a `cds --wait-for-server` that got its answer can call the API at once) and after the signal
// handlers are in place (as PID 1 a signal without a handler would be ignored).
if (database.kind === 'pglite') {
  const channel = await openAdminChannel({ config, database, log, revoked: () => app.shared.changes.revocation() });
  if (stopping) await channel?.close();
  else {
    adminChannel = channel;
    reportStart(config.dataDir, 'ready');
  }
}

/** An operator's set-up, not a bug: one line naming the setting, no stack; exit 1. */
function cannotListen(why: string): never {
  log.fatal(`cannot listen on ${config.host}:${config.port}: ${why}`);
  process.stderr.write(`cannot listen on ${config.host}:${config.port}: ${why}\n`);
  reportFailure(`cannot listen on ${config.host}:${config.port}: ${why}`);
  process.exit(1);
}

/** What an operator must change when the address cannot be listened on; undefined for anything else. */
function listenProblem(code: string | undefined): string | undefined {
  if (code === 'EADDRINUSE')
    return `port ${config.port} is in use by another process: stop it, or set PORT to a free port`;
  if (code === 'EACCES')
    return `port ${config.port} needs privileges this process does not have: set PORT to 1024 or above`;
  if (code === 'EADDRNOTAVAIL') return `${config.host} is not an address of this machine: set HOST`;
  return undefined;
}

async function fail(message: string, error: unknown): Promise<never> {
  // A missing database is an operator's set-up step, not a bug: its message says what to run, no stack.
  // An embedded database that cannot start on a full disk says so (disk-space.ts), whatever PGlite's message was.
  const reason = config.databaseUrl
    ? withPoolerHint(describeError(error))
    : await explainEmbeddedFailure(error, config.dataDir);
  if (error instanceof DatabaseMissingError) log.fatal(`${message}: ${reason}`);
  else log.fatal({ err: error, reason }, message);
  process.stderr.write(`${message}: ${reason}\n`);
  reportFailure(`${message}: ${reason}`);
  process.exit(1);
}
