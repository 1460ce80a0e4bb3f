// `npm run lint:openapi`: the OpenAPI document as a client receives it (built by the app on an empty in-memory
// database, PUBLIC_URL https://data.example.org), linted by Redocly's `recommended` rules and Spectral's `spectral:oas`,
// each less the exceptions written with their reasons in redocly.yaml and .spectral.yaml. The linters are fetched by
// npx at the versions below (about 80 MB together): tools for whoever changes the document, not dependencies of the
// service or of `npm run check`. Exit 1 when either finds a problem.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

const REDOCLY = '@redocly/cli@2.77.0';
const SPECTRAL = '@stoplight/spectral-cli@6.16.3';

const database = await openDatabase({ dataDir: 'memory://' });
await migrateToLatest(database.db);
const config = loadConfig({ PUBLIC_URL: 'https://data.example.org', LOG_LEVEL: 'silent' });
const app = await buildApp({ config, database });
const response = await app.inject({ method: 'GET', url: '/api/v0/openapi.json' });
await app.close();
await database.close();
const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'cds-openapi-')), 'openapi.json');
writeFileSync(file, response.body);

const root = path.resolve(import.meta.dirname, '..');
let failed = false;
for (const [tool, args] of [
  [REDOCLY, ['redocly', 'lint', '--config', path.join(root, 'redocly.yaml'), file]],
  [SPECTRAL, ['spectral', 'lint', '--ruleset', path.join(root, '.spectral.yaml'), '--fail-severity', 'warn', file]],
] as const) {
  try {
    execFileSync('npx', ['--yes', '--package', tool, '--', ...args], { stdio: 'inherit' });
  } catch {
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
