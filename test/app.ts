// Builds the real app on a fresh test database, the way server.ts does, minus the listening.
import crypto from 'node:crypto';
import { once } from 'node:events';
import { loadConfig, type Config } from '../src/config.ts';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp, REDACTED_PATHS } from '../src/app.ts';
import type { Timers } from '../src/access/known-keys.ts';
import type { Every } from '../src/auth/session-sweep.ts';
import type { Every as HubEvery } from '../src/changes/change-hub.ts';
import type { Lookup } from '../src/webhooks/webhook-targets.ts';
import { importDataset } from '../src/data/import/dataset.import.ts';
import { createTestDb, type TestDatabase } from './helpers.ts';

export interface TestApp {
  app: Awaited<ReturnType<typeof buildApp>>;
  database: TestDatabase;
  config: Config;
  /** Everything logged so far, when built with captureLogs. */
  logs(): string;
  close(): Promise<void>;
}

export async function buildTestApp(
  options: {
    env?: Record<string, string>;
    importBundled?: boolean;
    captureLogs?: boolean;
    /** Another instance of the service on the same database (it is not dropped on close). */
    sharedDatabase?: TestDatabase;
    /** Fixes the time of the rate limit's and the brute-force guard's windows. */
    clock?: () => number;
    /** The timer of periodic work (the session sweep), to run it by hand. */
    every?: Every;
    /** The time and waits of the brute-force guard's memory of known keys (test/fake-clock.ts: tickingTimers). */
    timers?: Timers;
    /** The timer of the change streams' poll and heartbeat (src/changes/change-hub.ts). */
    streamEvery?: HubEvery;
    /** How webhook targets' names resolve (no DNS in tests). */
    webhookLookup?: Lookup;
  } = {},
): Promise<TestApp> {
  const database = options.sharedDatabase ?? (await createTestDb({ importBundled: options.importBundled ?? false }));
  if (options.importBundled && options.sharedDatabase) await importDataset(database.db);
  // Resource tests read anonymously; the authentication tests set REST_AUTH=required themselves.
  // The limiter stays on but out of the way; the rate-limit tests set their own limit.
  // In CI's second pass every test app also uses the machine's Redis, under a prefix of its own.
  const redis = process.env.REDIS_URL
    ? { REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: `cds-test-${crypto.randomBytes(4).toString('hex')}:` }
    : {};
  // Anonymous answers stay private (as before the edge, docs/edge.md): the edge's tests set EDGE_MAX_AGE_S themselves.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    REST_AUTH: 'optional',
    RATE_LIMIT_PER_SECOND: '1000000',
    EDGE_MAX_AGE_S: '0',
    ...redis,
    ...options.env,
  });
  const lines: string[] = [];
  // Captured at the most verbose level, the way the logs of a whole run would be inspected.
  const logger = options.captureLogs
    ? pino(
        { level: 'trace', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
        new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }),
      )
    : // TEST_LOG_FILE (docs/development.md, Tests): warnings and errors to a file, to read what a 500 in a run was.
      process.env.TEST_LOG_FILE
      ? pino(
          { level: 'warn', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
          pino.destination({ dest: process.env.TEST_LOG_FILE, sync: true, append: true }),
        )
      : undefined;
  const app = await buildApp({
    config,
    database,
    ...(logger ? { logger } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.every ? { every: options.every } : {}),
    ...(options.timers ? { timers: options.timers } : {}),
    ...(options.streamEvery ? { streamEvery: options.streamEvery } : {}),
    ...(options.webhookLookup ? { webhookLookup: options.webhookLookup } : {}),
  });
  await app.ready();
  return {
    app,
    database,
    config,
    logs: () => lines.join(''),
    async close() {
      await app.close();
      if (!options.sharedDatabase) await database.drop();
    },
  };
}

/**
 * Adds `count` instances built by `build` (the same Redis in their env) to `instances` (closed by the caller, even
 * when one fails to start), and waits until each one's Redis connection is ready: from then on what one instance
 * announces the other sees.
 */
export async function addInstancesOnRedis(
  instances: TestApp[],
  count: number,
  build: () => Promise<TestApp>,
): Promise<void> {
  for (let i = 0; i < count; i++) instances.push(await build());
  for (const instance of instances) {
    const connection = instance.app.shared.redis!;
    if (connection.status !== 'ready') await once(connection, 'ready');
  }
}
