// Test tier: system (starts several servers as processes): `npm run test:system`, CI.
// Two service processes on different ports, one PostgreSQL and one Redis, as behind a load
// balancer: the limit is global, a revocation through one is seen by the other at once, and an
// import empties both response caches. Needs a PostgreSQL server (CI's second pass).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createTestDb, serverUrl, type TestDatabase } from './helpers.ts';
import { exited, freePort, ROOT, runCli, startServer, waitFor200 } from './process.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';
import { graphqlOver, newKeyOver, readOver as read, revokeOver } from './auth.ts';

const skip = serverUrl
  ? false
  : "needs DATABASE_URL: two processes cannot share an embedded database (runs in CI's PostgreSQL pass)";

let database: TestDatabase;
let redis: PrivateRedis;
let env: Record<string, string>;
const servers: (ChildProcess & { output: () => string })[] = [];
const bases: string[] = [];
let tmp: string;

before(async () => {
  if (skip) return;
  database = await createTestDb({ migrate: false });
  redis = await startPrivateRedis();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-multi-'));
  env = {
    DATABASE_URL: database.url!,
    REDIS_URL: redis.url,
    REDIS_PREFIX: 'multi:',
    AUTH_DEV_LOGIN: 'true',
    REST_AUTH: 'required',
    RATE_LIMIT_PER_SECOND: '10',
    LOG_LEVEL: 'warn',
  };
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    servers.push(startServer({ ...env, PORT: String(port) }));
    bases.push(`http://127.0.0.1:${port}`);
  }
  for (const base of bases) await waitFor200(`${base}/status/`, 120_000);
});

after(async () => {
  if (skip) return;
  for (const server of servers) server.kill('SIGTERM');
  for (const server of servers) await exited(server);
  await redis.stop();
  await database.drop();
  await fs.rm(tmp, { recursive: true, force: true });
});

const newKey = (base: string, login: string) => newKeyOver(base, login, 'multi');

test('the rate limit of one key is global across the two instances', { skip }, async () => {
  // The limit counts per second of each process's own clock, which a test cannot move. A burst of 11 requests of a new
  // key (6 to one instance, 5 to the other) within one second: exactly 10 served, each with its own remaining count
  // (counted once for both instances), and one 429. Instead of waiting for a second to begin, a burst that crossed
  // into the next second (more than 10 served) is tried again with another key. Counted per instance, every burst
  // would be served in full.
  const outcomes: string[] = [];
  for (let attempt = 1; attempt <= 5; attempt++) {
    const key = await newKey(bases[0]!, `multi-limit-${attempt}`);
    const responses = await Promise.all([
      ...Array.from({ length: 6 }, () => read(bases[0]!, key.raw)),
      ...Array.from({ length: 5 }, () => read(bases[1]!, key.raw)),
    ]);
    const served = responses.filter((r) => r.status === 200);
    const remaining = served.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((x, y) => x - y);
    outcomes.push(responses.map((r) => r.status).join(','));
    if (served.length > 10) continue; // the burst spanned two seconds
    assert.deepEqual(responses.map((r) => r.status).sort(), [...Array(10).fill(200), 429]);
    assert.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    return;
  }
  assert.fail(`every burst was served in full: ${outcomes.join(' | ')}`);
});

test('a key revoked through one instance is refused by the other on the next request', { skip }, async () => {
  const key = await newKey(bases[0]!, 'multi-revoke');
  assert.equal((await read(bases[1]!, key.raw)).status, 200);
  assert.equal(await revokeOver(bases[0]!, key), true);
  assert.equal((await read(bases[1]!, key.raw)).status, 401);
});

test('a key revoked through the CLI is refused by both instances on the next request', { skip }, async () => {
  const key = await newKey(bases[1]!, 'multi-cli-revoke');
  for (const base of bases) assert.equal((await read(base, key.raw)).status, 200);
  const revoked = await runCli(['keys', 'revoke', key.uuid], env);
  assert.equal(revoked.code, 0, revoked.stderr);
  for (const base of bases) assert.equal((await read(base, key.raw)).status, 401, base);
});

test('an import through the CLI empties the response caches of both instances', { skip }, async () => {
  const key = await newKey(bases[1]!, 'multi-cache');
  for (const base of bases) {
    await read(base, key.raw, '/api/v0/chapters/london');
    const hit = await read(base, key.raw, '/api/v0/chapters/london');
    assert.equal(hit.headers.get('x-cache'), 'HIT');
    assert.equal(((await hit.json()) as { name: string }).name, 'OWASP London');
  }
  const changed = path.join(tmp, 'data');
  await fs.cp(path.join(ROOT, 'data'), changed, { recursive: true });
  const file = path.join(changed, 'owasp', 'chapters.json');
  const chapters = JSON.parse(await fs.readFile(file, 'utf8')) as { url: string; title: string }[];
  chapters.find((c) => c.url.endsWith('/www-chapter-london/'))!.title = 'OWASP London Renamed';
  await fs.writeFile(file, JSON.stringify(chapters));
  const imported = await runCli(['import', '--from', changed], env);
  assert.equal(imported.code, 0, imported.stderr);
  const started = Date.now();
  for (const base of bases) {
    const res = await read(base, key.raw, '/api/v0/chapters/london');
    assert.equal(
      ((await res.json()) as { name: string }).name,
      'OWASP London Renamed',
      `${base}, ${Date.now() - started} ms after the import`,
    );
  }
});

test(
  'a key rotated through one instance (no grace) is refused by the other at once; its replacement works',
  { skip },
  async () => {
    const key = await newKey(bases[0]!, 'multi-rotate');
    assert.equal((await read(bases[1]!, key.raw)).status, 200);
    const rotate = await graphqlOver<{ rotateApiKey: { ok: boolean; rawKey: string } }>(
      bases[0]!,
      key,
      'mutation($uuid: UUID!) { rotateApiKey(uuid: $uuid, gracePeriodHours: 0) { ok rawKey } }',
      { uuid: key.uuid },
    );
    const rotated = rotate.data.rotateApiKey;
    assert.equal(rotated.ok, true);
    for (const base of bases) {
      assert.equal((await read(base, key.raw)).status, 401, base);
      const fresh = await read(base, rotated.rawKey);
      assert.equal(fresh.status, 200, base);
      assert.match(fresh.headers.get('api-key-expiration')!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.ok(fresh.headers.get('x-request-id'));
    }
  },
);
