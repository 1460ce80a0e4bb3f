// The floor of a cached answer inside the service's process (issue 46; bench/CACHED-HITS.md): bench/bare-server.js's
// constant answer, from a process that has first imported the service's modules (`import`), or also built its app on
// the database of DATA_DIR or DATABASE_URL (`built`), or also has that app listening on PORT (`listening`). The app
// answers none of the measured requests: only what its presence costs Node's HTTP code is measured.
//   node --import tsx bench/floor-server.ts STAGE PORT BODY_FILE [HEADERS_FILE]
// bench/cached-ab.ts runs it with CACHED_AB_FLOOR=1, in the same rounds as bare and the service.
import pino from 'pino';

const stage = process.argv.splice(2, 1)[0];
if (!['import', 'built', 'listening'].includes(stage ?? '')) throw new Error(`stage: import, built or listening`);
const { buildApp } = await import('../src/app.ts');
if (stage !== 'import') {
  const { loadConfig } = await import('../src/config.ts');
  const { openConfiguredDatabase, prepareDatabase } = await import('../src/startup.ts');
  const config = loadConfig();
  const log = pino({ level: 'warn' });
  const database = await openConfiguredDatabase(config, config.databaseStatementTimeoutMs, config.lists);
  await prepareDatabase(database, config, log);
  const app = await buildApp({ config, database, logger: log });
  if (stage === 'listening') await app.listen({ port: config.port, host: '127.0.0.1' });
  else await app.ready();
}
// The same server as the bare rows: its arguments are now PORT BODY_FILE [HEADERS_FILE].
await import(new URL('./bare-server.js', import.meta.url).href);
