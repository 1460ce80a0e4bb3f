// Builds the real app on a fresh test database, the way server.ts does, minus the listening.
import { loadConfig, type Config } from '../src/config.ts';
import { buildApp } from '../src/app.ts';
import { importDataset } from '../src/data/import.ts';
import { createTestDb, type TestDatabase } from './helpers.ts';

export interface TestApp {
  app: Awaited<ReturnType<typeof buildApp>>;
  database: TestDatabase;
  config: Config;
  close(): Promise<void>;
}

export async function buildTestApp(
  options: { env?: Record<string, string>; importBundled?: boolean } = {},
): Promise<TestApp> {
  const database = await createTestDb();
  if (options.importBundled) await importDataset(database.db);
  // Resource tests read anonymously; the authentication tests set REST_AUTH=required themselves.
  const config = loadConfig({ LOG_LEVEL: 'silent', REST_AUTH: 'optional', ...options.env });
  const app = await buildApp({ config, database });
  await app.ready();
  return {
    app,
    database,
    config,
    async close() {
      await app.close();
      await database.drop();
    },
  };
}
