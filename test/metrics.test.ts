// GET /metrics: Prometheus text with the process, the requests by route template, and the cache,
// data version and rate-limit state; optionally behind a bearer token that never reaches a log.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildTestApp, type TestApp } from './app.ts';
import { chapter } from './factories.ts';

let open: TestApp;
let guarded: TestApp;
const TOKEN = 'metrics-secret-7f3a9c1e5b';

before(async () => {
  open = await buildTestApp();
  await chapter(open.database.db, { key: 'london' });
  guarded = await buildTestApp({ env: { METRICS_TOKEN: TOKEN }, captureLogs: true });
});
after(async () => {
  await open.close();
  await guarded.close();
});

async function scrape(t: TestApp, headers: Record<string, string> = {}): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return res.body;
}

/** The value of one series, by its name and labels as Prometheus prints them. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('process metrics and the service state are exposed', async () => {
  const text = await scrape(open);
  for (const name of [
    'process_cpu_user_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_seconds',
    'nodejs_heap_size_used_bytes',
  ]) {
    assert.ok(value(text, name) !== undefined, name);
  }
  assert.equal(value(text, 'cds_data_version'), open.app.shared.watcher.version);
  assert.equal(value(text, 'cds_rate_limit_shared'), open.app.shared.counter.shared ? 1 : 0);
  assert.equal(value(text, 'cds_response_cache_entries'), open.app.shared.cache.size);
});

test("the names follow Prometheus' conventions, as `promtool check metrics` reads them", async () => {
  const text = await scrape(open);
  const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name: name!, type: type! }));
  assert.ok(types.length > 20, 'the metrics are typed');
  for (const { name, type } of types) {
    assert.match(name, /^[a-z_:][a-z0-9_:]*$/, `${name}: snake_case`);
    if (type === 'counter') assert.match(name, /_total$/, `${name}: a counter ends in _total`);
    else assert.doesNotMatch(name, /_total$/, `${name}: a ${type} does not end in _total`);
    assert.match(text, new RegExp(`^# HELP ${name} \\S`, 'm'), `${name}: has a help text`);
  }
  // The numbers prom-client's three misnamed gauges carried are still there, by type.
  assert.match(text, /^# TYPE nodejs_active_handles gauge$/m);
});

test('requests are counted by method, route template and status; cache hits and misses too', async () => {
  const before = await scrape(open);
  const hits = value(before, 'cds_response_cache_hits_total') ?? 0;
  const misses = value(before, 'cds_response_cache_misses_total') ?? 0;
  for (let i = 0; i < 3; i++)
    assert.equal((await open.app.inject({ method: 'GET', url: '/api/v0/chapters/?limit=5' })).statusCode, 200);
  for (const id of ['london', 'LONDON', 'paris'])
    await open.app.inject({ method: 'GET', url: `/api/v0/chapters/${id}` });
  for (const path of ['/nope/one', '/nope/two?x=1'])
    assert.equal((await open.app.inject({ method: 'GET', url: path })).statusCode, 404);
  await open.app.inject({
    method: 'GET',
    url: '/api/v0/chapters/',
    headers: { 'x-api-key': 'cds_not-a-real-key-but-secret-looking' },
  });

  const text = await scrape(open);
  assert.equal(value(text, 'http_requests_total{method="GET",route="/api/v0/chapters/",status_code="200"}'), 3);
  assert.equal(
    value(text, 'http_requests_total{method="GET",route="/api/v0/chapters/:chapter_id",status_code="200"}'),
    2,
  );
  assert.equal(
    value(text, 'http_requests_total{method="GET",route="/api/v0/chapters/:chapter_id",status_code="404"}'),
    1,
  );
  assert.equal(value(text, 'http_requests_total{method="GET",route="unmatched",status_code="404"}'), 2);
  assert.equal(value(text, 'http_requests_total{method="GET",route="/api/v0/chapters/",status_code="401"}'), 1);
  assert.equal(
    value(text, 'http_request_duration_seconds_count{method="GET",route="/api/v0/chapters/",status_code="200"}'),
    3,
  );
  // Buckets are cumulative, end with +Inf equal to the count, and hold the sum's observations.
  const labels = 'method="GET",route="/api/v0/chapters/",status_code="200"';
  const buckets = text
    .split('\n')
    .filter((line) => line.startsWith('http_request_duration_seconds_bucket{') && line.includes(labels))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
  assert.ok(buckets.length > 5);
  assert.ok(
    buckets.every((n, i) => i === 0 || n >= buckets[i - 1]!),
    `cumulative: ${buckets.join(',')}`,
  );
  assert.equal(value(text, `http_request_duration_seconds_bucket{le="+Inf",${labels}}`), 3);
  assert.ok(value(text, `http_request_duration_seconds_sum{${labels}}`)! > 0);
  // The first list request missed and was stored; the next two were hits; so were the repeated details.
  assert.equal(value(text, 'cds_response_cache_misses_total'), misses + 1 + 3);
  assert.equal(value(text, 'cds_response_cache_hits_total'), hits + 2);
  assert.ok(!text.includes('/nope'), 'raw paths never become labels');
  assert.ok(!text.includes('cds_not-a-real-key'), 'no key material in the metrics');
});

test('HEAD answers, other methods are 405', async () => {
  assert.equal((await open.app.inject({ method: 'HEAD', url: '/metrics' })).statusCode, 200);
  const res = await open.app.inject({ method: 'POST', url: '/metrics' });
  assert.equal(res.statusCode, 405);
  assert.match(String(res.headers.allow), /GET/);
});

test('with METRICS_TOKEN, only the bearer of the token reads the metrics, and the token is never logged', async () => {
  for (const headers of [
    {},
    { authorization: 'Bearer wrong' },
    { authorization: TOKEN },
    { authorization: `Basic ${TOKEN}` },
  ]) {
    const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers });
    assert.equal(res.statusCode, 401, JSON.stringify(headers));
    assert.deepEqual(res.json(), { detail: 'Missing or invalid metrics token.' });
    assert.match(String(res.headers['www-authenticate']), /^Bearer/);
  }
  assert.ok((await scrape(guarded, { authorization: `Bearer ${TOKEN}` })).includes('http_requests_total'));
  // The same header on a route that logs every request at trace level: still nowhere in the logs.
  await guarded.app.inject({ method: 'GET', url: '/api/v0/chapters/', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.ok(guarded.logs().includes('/api/v0/chapters/'), 'the requests were logged');
  assert.ok(!guarded.logs().includes(TOKEN));
});
