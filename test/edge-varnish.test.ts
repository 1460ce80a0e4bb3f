// Test tier: system (starts Varnish and the server): `npm run test:system`, CI.
// The service behind the shipped Varnish (issue 44, docs/edge.md): deploy/varnish/default.vcl, its backend lines
// pointed at an app of this test, in front of which varnishd (Debian's, with xkey from varnish-modules) is started on a
// free port; the purge queue (src/edge/) follows the change log and purges through it. It brings its own edge, so its
// outcome does not depend on the engine of the pass: it runs in one pass only, CI's PostgreSQL pass (as
// pgbouncer.test.ts), where a missing varnishd is a failure, not a skip; the 1,000 write-then-read probes there are
// quick on the server's engine.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { freePort } from './process.ts';
import { startVarnish, varnishMissing, type PrivateVarnish } from './varnish-server.ts';
import { editOwasp, loneChapter } from './change-log.owasp.ts';
import { BUNDLED_DATA_DIR } from '../src/data/import/dataset.import.ts';
import { OWASP_FILES } from '../src/data/sync/owasp/owasp.download.ts';
import { syncOwasp } from '../src/data/sync/owasp/owasp.sync.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';
import { createApiKey } from '../src/api-keys/api-keys.service.ts';
import { startEdgePurge, type EdgePurge } from '../src/edge/edge-purge.ts';
import { createPurger } from '../src/edge/edge-purgers.ts';

const skip = process.env.DATABASE_URL
  ? false
  : "runs in CI's PostgreSQL pass only (it brings its own Varnish; see the comment at the top)";

const GEOJSON = { accept: 'application/geo+json' };
/** London, renamed by the sync (test/change-log.owasp.ts), as a detail, a list item and a feature's properties say it. */
const RENAMED = '"key":"london","name":"OWASP Manchester"';

describe('the service behind the shipped Varnish', { skip }, () => {
  let t: TestApp;
  let edge: PrivateVarnish;
  let purge: EdgePurge;
  let originPort: number;
  let now = Date.now();
  /** The purge calls go through this stand-in of the edge's purge address: it fails while `failing` is set. */
  let failing = false;
  const purged: string[] = [];
  let gate: http.Server;

  before(async () => {
    const missing = await varnishMissing();
    if (missing) throw new Error(`Varnish is required in this pass: ${missing}`);
    t = await buildTestApp({ importBundled: true, env: { EDGE_MAX_AGE_S: '300' } });
    originPort = await freePort();
    await t.app.listen({ port: originPort, host: '127.0.0.1' });
    edge = await startVarnish(originPort);
    gate = http.createServer((request, response) => {
      if (failing) return void response.writeHead(503).end('down');
      const xkey = request.headers.xkey;
      if (typeof xkey === 'string') purged.push(...xkey.split(' '));
      const headers = Object.fromEntries(
        ['xkey', 'x-purge-all'].flatMap((name) =>
          request.headers[name] ? [[name, String(request.headers[name])]] : [],
        ),
      );
      fetch(`${edge.url}/`, { method: 'PURGE', headers }).then(
        async (res) => response.writeHead(res.status).end(await res.text()),
        () => response.writeHead(502).end(),
      );
    });
    const gatePort = await freePort();
    await new Promise<void>((resolve) => gate.listen(gatePort, '127.0.0.1', resolve));
    purge = startEdgePurge({
      db: t.database.db,
      purger: createPurger({ provider: 'varnish', target: `http://127.0.0.1:${gatePort}/` })!,
      metrics: t.app.shared.purges,
      log: t.app.log,
      clock: () => now,
      watcher: t.app.shared.watcher,
      beforePurge: () => t.app.shared.watcher.refresh(),
      random: () => 0,
    });
    await purge.idle();
  });

  after(async () => {
    await purge?.stop();
    gate?.close();
    await edge?.destroy();
    await t?.close();
  });

  const through = (url: string, headers: Record<string, string> = {}) => fetch(`${edge.url}${url}`, { headers });
  const read = async (url: string, headers: Record<string, string> = {}) => {
    const res = await through(url, headers);
    return { res, body: await res.text() };
  };

  it('a second anonymous read is a hit, public and tagged, with nothing of its caller', async () => {
    const first = await read('/api/v0/chapters/london');
    assert.equal(first.res.status, 200);
    const second = await read('/api/v0/chapters/london');
    assert.equal(second.res.headers.get('x-cache'), 'HIT');
    assert.equal(second.res.headers.get('x-varnish')?.split(' ').length, 2, 'two ids on a hit');
    assert.equal(second.body, first.body);
    assert.match(second.res.headers.get('cache-control')!, /^public, max-age=0, s-maxage=300, /);
    const tags = second.res.headers.get('surrogate-key')!.split(' ');
    assert.ok(tags.includes('chapters:london') && tags.some((tag) => /^dv:\d+$/.test(tag)), tags.join(' '));
    for (const name of ['ratelimit', 'ratelimit-remaining', 'ratelimit-limit', 'api-key-expiration', 'set-cookie'])
      assert.equal(second.res.headers.get(name), null, name);
    assert.match(second.res.headers.get('x-request-id') ?? '', /^$/, 'no request id replayed');
  });

  it('after a sync changes, removes and adds chapters, the edge answers the new data within 5 s', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-edge-owasp-'));
    for (const file of OWASP_FILES) await fs.copyFile(path.join(BUNDLED_DATA_DIR, 'owasp', file), path.join(dir, file));
    const lone = await loneChapter(t.database.db);
    const pages = async () => {
      const bodies: string[] = [];
      for (let page = 1; page <= 10; page++) {
        const { res, body } = await read(`/api/v0/chapters/?page_size=100&page=${page}`);
        if (res.status !== 200) break;
        bodies.push(body);
        if (res.headers.get('link')?.includes('rel="next"') !== true) break;
      }
      return bodies.join('\n');
    };
    const geojson = async () => (await read('/api/v0/chapters/?country=United%20Kingdom', GEOJSON)).body;
    const state = async () => ({
      london: (await read('/api/v0/chapters/london')).body,
      lone: (await read(`/api/v0/chapters/${lone}`)).res.status,
      tartu: (await read('/api/v0/chapters/tartu')).res.status,
      pages: await pages(),
      search: (await read('/api/v0/search/?q=tartu&resource=chapters')).body,
      geo: await geojson(),
    });
    // Warm: everything read twice, so that the edge holds it.
    await state();
    const warm = await state();
    assert.equal(warm.lone, 200);
    assert.equal(warm.tartu, 404);
    assert.ok(warm.pages.includes(`"key":"${lone}"`));
    assert.ok(!warm.search.includes('"id":"tartu"') && !warm.london.includes(RENAMED));
    assert.ok(warm.geo.includes('"key":"london"') && !warm.geo.includes(RENAMED));
    await editOwasp(t.database.db, dir, new Date());
    await syncOwasp(t.database.db, { from: dir, now: () => new Date() });
    const synced = Date.now();
    // No kick: the queue hears the change by itself (the data version's watcher, its own poll).
    const fresh = (s: Awaited<ReturnType<typeof state>>) =>
      s.london.includes(RENAMED) &&
      s.lone === 404 &&
      s.tartu === 200 &&
      !s.pages.includes(`"key":"${lone}"`) &&
      s.pages.includes('"key":"tartu"') &&
      s.pages.includes(RENAMED) &&
      s.search.includes('"id":"tartu"') &&
      s.geo.includes(RENAMED);
    let last = await state();
    while (!fresh(last) && Date.now() - synced < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      last = await state();
    }
    assert.ok(fresh(last), `not fresh within 5 s: ${JSON.stringify({ ...last, pages: '…', geo: '…' }).slice(0, 500)}`);
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('1,000 write-then-read probes: no stale body from the edge', async () => {
    const urls: [string, Record<string, string>][] = [
      ['/api/v0/chapters/tartu', {}],
      ['/api/v0/chapters/?country=Estonia', {}],
      ['/api/v0/search/?q=tartu&resource=chapters', {}],
      ['/api/v0/chapters/?country=Estonia', GEOJSON],
    ];
    for (const [url, headers] of urls) await read(url, headers);
    let stale = 0;
    let misses = 0;
    const started = Date.now();
    for (let i = 0; i < 1_000; i++) {
      const name = `Tartu probe ${i}`;
      await sql`UPDATE chapters SET name = ${name} WHERE key = 'tartu'`.execute(t.database.db);
      await purge.idle();
      const [url, headers] = urls[i % urls.length]!;
      const { res, body } = await read(url, headers);
      if (!body.includes(`${name}"`) && !body.includes(`${name}<`)) stale++;
      if (res.headers.get('x-cache') === 'MISS') misses++;
    }
    assert.equal(stale, 0, 'stale bodies');
    assert.equal(misses, 1_000, 'each read after its purge is fetched again');
    // The probes' own pace, for the record (not a goal): a write, its purge and a read through the edge.
    assert.ok(Date.now() - started < 120_000);
  });

  it('a keyed answer is never stored nor served to another key or to an anonymous reader; a wrong key is 401', async () => {
    const user = await upsertLocalUser(t.database.db, 'edge-reader');
    const keyOf = async (name: string, days: number) => {
      const created = await createApiKey(t.database.db, user.id, name, new Date(Date.now() + days * 86_400_000));
      assert.ok(created.ok);
      return created.rawKey;
    };
    const [one, two] = [await keyOf('one', 10), await keyOf('two', 20)];
    const url = '/api/v0/chapters/?country=India';
    for (let i = 0; i < 2; i++) {
      const keyed = await through(url, { 'x-api-key': one });
      assert.equal(keyed.status, 200);
      assert.equal(keyed.headers.get('x-cache'), 'MISS', 'never stored');
      assert.match(keyed.headers.get('cache-control')!, /private/);
      assert.ok(keyed.headers.get('api-key-expiration'));
    }
    const other = await through(url, { 'x-api-key': two });
    assert.equal(other.headers.get('x-cache'), 'MISS');
    assert.notEqual(other.headers.get('api-key-expiration'), null);
    const anonymous = [await through(url), await through(url)];
    assert.equal(anonymous[0]!.headers.get('api-key-expiration'), null, 'not the keyed answer');
    assert.match(anonymous[0]!.headers.get('cache-control')!, /^public/);
    assert.equal(anonymous[1]!.headers.get('x-cache'), 'HIT');
    // A key, even a wrong or empty one, passes the edge: the service answers 401 each time.
    for (const key of ['cds_wrong', 'cds_wrong', '']) {
      const wrong = await through(url, { 'x-api-key': key });
      assert.equal(wrong.status, 401, JSON.stringify(key));
      assert.equal(wrong.headers.get('x-cache'), 'MISS');
      assert.doesNotMatch(wrong.headers.get('cache-control') ?? '', /public/);
    }
  });

  it('GraphQL, MCP, the change feed, the session pages and /metrics are never stored', async () => {
    for (const url of ['/graphql?query=%7B__typename%7D', '/mcp', '/api/v0/changes/', '/settings/', '/metrics']) {
      await through(url);
      const second = await through(url);
      assert.equal(second.headers.get('x-cache'), 'MISS', url);
      assert.doesNotMatch(second.headers.get('cache-control') ?? '', /public/, url);
    }
  });

  it('a purge endpoint that fails for a while still gets every purge once it is back', async () => {
    const url = '/api/v0/chapters/london';
    const failedBefore = (await t.app.shared.purges.failed.get()).values[0]?.value ?? 0;
    await read(url);
    failing = true;
    await sql`UPDATE chapters SET name = 'Manchester (while down)' WHERE key = 'london'`.execute(t.database.db);
    await purge.idle();
    await sql`UPDATE chapters SET name = 'Gdynia (while down)' WHERE key = 'gdynia'`.execute(t.database.db);
    await purge.idle();
    const during = await read(url);
    assert.ok(!during.body.includes('(while down)'), 'the old answer stays while the purge fails');
    const failed = (await t.app.shared.purges.failed.get()).values[0]?.value ?? 0;
    assert.ok(failed > failedBefore, 'counted as failed');
    // Backoff: nothing is sent before the retry is due, whatever wakes the queue.
    purged.length = 0;
    failing = false;
    await purge.idle();
    assert.equal(purged.length, 0, 'not before its time');
    now += 60_000;
    await purge.idle();
    assert.ok(purged.includes('chapters:london') && purged.includes('chapters:gdynia'), purged.join(' '));
    assert.ok((await read(url)).body.includes('Manchester (while down)'));
    assert.ok((await read('/api/v0/chapters/gdynia')).body.includes('Gdynia (while down)'));
    const retried = (await t.app.shared.purges.retried.get()).values[0]?.value ?? 0;
    assert.ok(retried >= 1, 'counted as retried');
    const metrics = await t.app.inject('/metrics');
    assert.match(metrics.body, /cds_edge_purges_sent_total\{provider="varnish"\} \d+/);
    assert.match(metrics.body, /cds_edge_purge_delay_seconds_count \d+/);
  });

  it('the origin stopped, the edge serves its stale public answers', async () => {
    // An instance whose answers expire at the edge after a second, on the same address, over the same database.
    await t.app.close();
    const short = await buildTestApp({ sharedDatabase: t.database, env: { EDGE_MAX_AGE_S: '1' } });
    await short.app.listen({ port: originPort, host: '127.0.0.1' });
    const url = '/api/v0/chapters/?page_size=3';
    const first = await read(url);
    assert.equal(first.res.status, 200);
    await short.app.close();
    const deadline = Date.now() + 15_000;
    let age = 0;
    while (age < 3) {
      const { res, body } = await read(url);
      assert.equal(res.status, 200, 'served while the origin is down');
      assert.equal(body, first.body);
      age = Number(res.headers.get('age'));
      if (Date.now() > deadline) assert.fail(`no stale answer: age ${age}`);
      if (age < 3) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.ok(age >= 3, 'past its s-maxage of 1 s: served stale');
  });
});
