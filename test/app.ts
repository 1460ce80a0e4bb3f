// Builds the real app on a fresh test database, the way server.ts does, minus the listening.
import { loadConfig, type Config } from '../src/config.ts';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp, REDACTED_PATHS } from '../src/app.ts';
import { importDataset } from '../src/data/import.ts';
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
  options: { env?: Record<string, string>; importBundled?: boolean; captureLogs?: boolean } = {},
): Promise<TestApp> {
  const database = await createTestDb();
  if (options.importBundled) await importDataset(database.db);
  // Resource tests read anonymously; the authentication tests set REST_AUTH=required themselves.
  const config = loadConfig({ LOG_LEVEL: 'silent', REST_AUTH: 'optional', ...options.env });
  const lines: string[] = [];
  // Captured at the most verbose level, the way the logs of a whole run would be inspected.
  const logger = options.captureLogs
    ? pino(
        { level: 'trace', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
        new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }),
      )
    : undefined;
  const app = await buildApp({ config, database, ...(logger ? { logger } : {}) });
  await app.ready();
  return {
    app,
    database,
    config,
    logs: () => lines.join(''),
    async close() {
      await app.close();
      await database.drop();
    },
  };
}
