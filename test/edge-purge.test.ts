// The edge's purge queue against local stand-ins of Fastly's and Cloudflare's APIs (issue 44, docs/edge.md): the
// request each provider is sent (path, token, soft purge, tags and their batches), retries until it succeeds, the
// second pass, once per change across instances, no redirect followed, no token in a log line, and the settings.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createTestDb, type TestDatabase } from './helpers.ts';
import { chapter } from './factories.ts';
import { loadConfig } from '../src/config.ts';
import { createPurger } from '../src/edge/edge-purgers.ts';
import { startEdgePurge, type EdgePurge } from '../src/edge/edge-purge.ts';
import { PurgeMetrics } from '../src/metrics/purge-metrics.ts';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const standIns: (() => Promise<void>)[] = [];

/** A stand-in API on 127.0.0.1: records every request and answers with `answer`; closed after each test. */
async function standIn(answer: (request: Received) => { status: number; body?: string; headers?: object }) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, body };
      received.push(request);
      const { status, body: out = '', headers = {} } = answer(request);
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standIns.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { received, base };
}

const FASTLY_TOKEN = 'fastly-token-never-logged';
const CLOUDFLARE_TOKEN = 'cloudflare-token-never-logged';

function logger() {
  const lines: string[] = [];
  const write = (object: object, message: string) =>
    lines.push(`${message} ${JSON.stringify(object, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`);
  return { lines, log: { warn: write, info: write } };
}

describe('purges through local stand-ins of Fastly and Cloudflare', () => {
  let database: TestDatabase;
  let now = Date.UTC(2026, 5, 1);
  const clock = () => now;
  const jobs: EdgePurge[] = [];
  const start = (purger: ReturnType<typeof createPurger>, metrics: PurgeMetrics, log = logger().log) => {
    // Looks only when the test asks (idle): no poll of its own, no watcher.
    const job = startEdgePurge({
      db: database.db,
      purger: purger!,
      metrics,
      log,
      clock,
      random: () => 0,
      pollMs: 1e9,
    });
    jobs.push(job);
    return job;
  };
  const stopAll = async () => {
    await Promise.all(jobs.splice(0).map((job) => job.stop()));
    // The next provider starts from a clean row, as a first start does.
    await sql`DELETE FROM edge_purge`.execute(database.db);
  };

  before(async () => {
    database = await createTestDb();
  });
  afterEach(async () => {
    await stopAll();
    await Promise.all(standIns.splice(0).map((close) => close()));
  });
  after(() => database?.drop());

  it('Fastly: soft purge by surrogate key with the token, 256 keys a call, retried until it succeeds', async () => {
    let down = 0;
    const fastly = await standIn(() => (down-- > 0 ? { status: 503 } : { status: 200, body: '{"status":"ok"}' }));
    const metrics = new PurgeMetrics();
    const { lines, log } = logger();
    const purger = createPurger({ provider: 'fastly', target: 'SVC123', token: FASTLY_TOKEN, urlBase: fastly.base });
    const job = start(purger, metrics, log);
    await job.idle();
    // The first start purges everything: purge_all.
    assert.deepEqual(
      fastly.received.map((r) => `${r.method} ${r.url}`),
      ['POST /service/SVC123/purge_all'],
    );
    assert.equal(fastly.received[0]!.headers['fastly-key'], FASTLY_TOKEN);
    fastly.received.length = 0;
    for (let i = 0; i < 300; i++) await chapter(database.db, { key: `fastly-${i}` });
    down = 2;
    await job.idle();
    assert.equal(fastly.received.length, 1, 'the first call failed');
    await job.idle();
    assert.equal(fastly.received.length, 1, 'nothing before the retry is due');
    now += 1_000;
    await job.idle();
    assert.equal(fastly.received.length, 2, 'the second failed too');
    now += 2_000;
    await job.idle();
    const calls = fastly.received.slice(2);
    assert.equal(calls.length, 2, '301 keys: two calls');
    for (const call of fastly.received) {
      assert.equal(call.method, 'POST');
      assert.equal(call.url, '/service/SVC123/purge');
      assert.equal(call.headers['fastly-key'], FASTLY_TOKEN);
      assert.equal(call.headers['fastly-soft-purge'], '1');
    }
    const keys = calls.flatMap((call) => String(call.headers['surrogate-key']).split(' '));
    assert.equal(String(calls[0]!.headers['surrogate-key']).split(' ').length, 256);
    assert.deepEqual(
      new Set(keys),
      new Set(['chapters', ...Array.from({ length: 300 }, (_, i) => `chapters:fastly-${i}`)]),
    );
    const value = async (counter: PurgeMetrics['sent']) => (await counter.get()).values[0]?.value ?? 0;
    assert.equal(await value(metrics.failed), 2);
    assert.equal(await value(metrics.retried), 3, 'the second attempt, and the two calls of the third');
    assert.equal(await value(metrics.sent), 3);
    assert.equal((await metrics.delay.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value, 300);
    assert.ok(
      lines.some((line) => line.includes('HTTP 503')),
      'the failure is logged',
    );
    assert.ok(!lines.join('\n').includes(FASTLY_TOKEN), 'never the token');
    // The second pass, once every instance has heard of the changes: the same keys again.
    fastly.received.length = 0;
    now += 2_500;
    await job.idle();
    const again = fastly.received.flatMap((call) => String(call.headers['surrogate-key']).split(' '));
    assert.deepEqual(new Set(again), new Set(keys));
    fastly.received.length = 0;
    now += 60_000;
    await job.idle();
    assert.equal(fastly.received.length, 0, 'then nothing more');
  });

  it('Cloudflare: purge_cache with tags and the bearer token, 30 a call; an answer without success is retried', async () => {
    let refuse = 1;
    const cloudflare = await standIn(() =>
      refuse-- > 0
        ? { status: 200, body: '{"success":false,"errors":[{"code":1134,"message":"rate limited"}]}' }
        : { status: 200, body: '{"success":true,"errors":[],"messages":[],"result":{"id":"x"}}' },
    );
    refuse = 0;
    const metrics = new PurgeMetrics();
    const purger = createPurger({
      provider: 'cloudflare',
      target: 'zone42',
      token: CLOUDFLARE_TOKEN,
      urlBase: cloudflare.base,
    });
    const job = start(purger, metrics);
    await job.idle();
    assert.deepEqual(JSON.parse(cloudflare.received[0]!.body), { purge_everything: true });
    cloudflare.received.length = 0;
    for (let i = 0; i < 40; i++) await chapter(database.db, { key: `cf-${i}` });
    refuse = 1;
    await job.idle();
    now += 1_000;
    await job.idle();
    const calls = cloudflare.received;
    assert.equal(calls.length, 1 + 2, 'one refused, then 41 tags in two calls');
    for (const call of calls) {
      assert.equal(call.method, 'POST');
      assert.equal(call.url, '/client/v4/zones/zone42/purge_cache');
      assert.equal(call.headers.authorization, `Bearer ${CLOUDFLARE_TOKEN}`);
      assert.match(String(call.headers['content-type']), /^application\/json/);
    }
    const batches = calls.slice(1).map((call) => (JSON.parse(call.body) as { tags: string[] }).tags);
    assert.deepEqual(
      batches.map((tags) => tags.length),
      [30, 11],
    );
    assert.ok(batches.flat().includes('chapters:cf-39') && batches.flat().includes('chapters'));
    assert.equal((await metrics.failed.get()).values[0]?.value, 1);
  });

  it('each change is purged by one instance; a redirect is a failure, never followed', async () => {
    const elsewhere = await standIn(() => ({ status: 200, body: '{"success":true}' }));
    let redirect = false;
    const cloudflare = await standIn(() =>
      redirect
        ? { status: 307, headers: { location: `${elsewhere.base}/client/v4/zones/zone42/purge_cache` } }
        : { status: 200, body: '{"success":true}' },
    );
    const settings = {
      provider: 'cloudflare',
      target: 'zone42',
      token: CLOUDFLARE_TOKEN,
      urlBase: cloudflare.base,
    } as const;
    const metrics = new PurgeMetrics();
    const [one, two] = [start(createPurger(settings), metrics), start(createPurger(settings), metrics)];
    await Promise.all([one.idle(), two.idle()]);
    cloudflare.received.length = 0;
    await chapter(database.db, { key: 'once' });
    await Promise.all([one.idle(), two.idle(), one.idle(), two.idle()]);
    const named = () =>
      cloudflare.received.filter((call) =>
        (JSON.parse(call.body) as { tags?: string[] }).tags?.includes('chapters:once'),
      );
    assert.equal(named().length, 1, 'once across both instances');
    redirect = true;
    await chapter(database.db, { key: 'redirected' });
    await Promise.all([one.idle(), two.idle()]);
    assert.equal(elsewhere.received.length, 0, 'the token went nowhere else');
    assert.ok(((await metrics.failed.get()).values[0]?.value ?? 0) >= 1);
    redirect = false;
    now += 5_000;
    await Promise.all([one.idle(), two.idle()]);
    assert.ok(
      cloudflare.received.some((call) => call.body.includes('chapters:redirected')) &&
        cloudflare.received.filter((call) => call.body.includes('chapters:redirected')).length >= 2,
      'retried at the same address once it answers',
    );
  });
});

describe('the edge settings', () => {
  it('read EDGE_MAX_AGE_S, EDGE_PURGE and the token its provider needs', () => {
    assert.equal(loadConfig({}).edgeMaxAgeS, 300);
    assert.equal(loadConfig({}).edgePurge, undefined);
    assert.equal(loadConfig({ EDGE_MAX_AGE_S: '0' }).edgeMaxAgeS, 0);
    assert.deepEqual(loadConfig({ EDGE_PURGE: 'varnish:http://127.0.0.1:6081/' }).edgePurge, {
      provider: 'varnish',
      target: 'http://127.0.0.1:6081',
    });
    assert.deepEqual(loadConfig({ EDGE_PURGE: 'fastly:SVC1', FASTLY_API_TOKEN: 't' }).edgePurge, {
      provider: 'fastly',
      target: 'SVC1',
      token: 't',
      urlBase: undefined,
    });
    const refused: [Record<string, string>, RegExp][] = [
      [{ EDGE_PURGE: 'fastly:SVC1' }, /FASTLY_API_TOKEN is required/],
      [{ EDGE_PURGE: 'cloudflare:zone', CLOUDFLARE_API_TOKEN: 'a', FASTLY_API_TOKEN: 'b' }, /FASTLY_API_TOKEN is set/],
      [{ EDGE_PURGE: 'akamai:x' }, /EDGE_PURGE must be/],
      [{ EDGE_PURGE: 'varnish:ftp://x' }, /EDGE_PURGE must use/],
      [{ EDGE_PURGE: 'fastly:../x', FASTLY_API_TOKEN: 't' }, /service id/],
      [{ FASTLY_API_TOKEN: 'secret-value' }, /FASTLY_API_TOKEN is set but EDGE_PURGE is not/],
      [{ EDGE_MAX_AGE_S: '-1' }, /EDGE_MAX_AGE_S/],
    ];
    for (const [env, message] of refused) {
      assert.throws(() => loadConfig(env), message);
      try {
        loadConfig(env);
      } catch (error) {
        assert.ok(!(error as Error).message.includes('secret-value'), 'never the token');
      }
    }
  });
});
