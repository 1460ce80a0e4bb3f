// What GraphQL tells a client when something other than the query is wrong (issue 13, F3 and F10):
// with the database gone, a caller with any well-formed session cookie gets a generic message and an error id,
// never the driver's message (the log has both); production does not suggest field names.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp, REDACTED_PATHS } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/index.ts';
import { freePort } from './process.ts';

type App = Awaited<ReturnType<typeof buildApp>>;

const gone: { app: App; database: Database; logs: string[] }[] = [];

/** The service on a PostgreSQL address where nothing listens: every query fails with ECONNREFUSED. */
async function appWithoutDatabase(nodeEnv: string | undefined) {
  const database = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${await freePort()}/gone` });
  const logs: string[] = [];
  const logger = pino(
    { level: 'info', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    new Writable({ write: (chunk: Buffer, _encoding, done) => (logs.push(chunk.toString()), done()) }),
  );
  const config = loadConfig({ LOG_LEVEL: 'info', ...(nodeEnv ? { NODE_ENV: nodeEnv } : {}) });
  const app = await buildApp({ config, database, logger });
  await app.ready();
  gone.push({ app, database, logs });
  return { app, logs };
}

after(async () => {
  for (const { app, database } of gone) {
    await app.close();
    await database.close();
  }
});

const ask = (app: App, query: string, cookie = true) =>
  app.inject({
    method: 'POST',
    url: '/graphql/',
    headers: cookie
      ? {
          'content-type': 'application/json',
          cookie: `cds_session=${'a'.repeat(43)}; csrftoken=t0k3n`,
          'x-csrftoken': 't0k3n',
        }
      : { 'content-type': 'application/json' },
    payload: JSON.stringify({ query }),
  });

for (const nodeEnv of [undefined, 'production']) {
  test(`database gone (${nodeEnv ?? 'development'}): a generic message with an error id, the cause only in the log`, async () => {
    const { app, logs } = await appWithoutDatabase(nodeEnv);
    for (const query of [
      '{ apiKeys { uuid } }',
      '{ me { login } }',
      'mutation { createApiKey(name: "x", expiresAt: "2100-01-01T00:00:00Z") { ok } }',
    ]) {
      const res = await ask(app, query);
      assert.equal(res.statusCode, 503, `${query}: an outage is 503, as REST answers`);
      assert.equal(res.headers['retry-after'], '5');
      const body = res.json() as { errors: { message: string; extensions?: { code?: string; errorId?: string } }[] };
      assert.doesNotMatch(res.body, /ECONNREFUSED|127\.0\.0\.1|connect|postgres/i, `${query}: ${res.body}`);
      const [error] = body.errors;
      assert.match(error!.message, /^Service unavailable \(error id [0-9a-f-]{36}\)$/, query);
      assert.equal(error!.extensions?.code, 'SERVICE_UNAVAILABLE');
      const id = error!.extensions!.errorId!;
      assert.ok(error!.message.includes(id));
      // (The id is the request id, on every line of the request: the line of the error names it as errorId.)
      const logged = logs.find((line) => line.includes(`"errorId":"${id}"`));
      assert.ok(logged, `the error id ${id} is logged`);
      assert.match(logged, /ECONNREFUSED/, 'the log has the cause');
    }
  });
}

// These two need no database: the answer comes before any query.
test('messages we wrote still reach the client (not signed in)', async () => {
  const { app } = await appWithoutDatabase(undefined);
  const res = await ask(app, '{ apiKeys { uuid } }', false);
  assert.equal(res.json().errors[0].message, 'You must be logged in to perform this action.');
});

test('production GraphQL does not suggest field names; development does', async () => {
  const query = '{ apiKey { uuid } }';
  const production = (await ask((await appWithoutDatabase('production')).app, query, false)).json() as {
    errors: { message: string }[];
  };
  assert.ok(production.errors.length > 0);
  for (const error of production.errors) assert.doesNotMatch(error.message, /Did you mean/);
  assert.match(production.errors[0]!.message, /Cannot query field "apiKey" on type "Query"\.$/);
  const development = (await ask((await appWithoutDatabase(undefined)).app, query, false)).json() as {
    errors: { message: string }[];
  };
  assert.match(development.errors[0]!.message, /Did you mean "apiKeys"/);
});
