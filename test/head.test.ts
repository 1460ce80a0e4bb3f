// HEAD answers what GET answers, without the body: the same status, Content-Length, ETag and every other header, on a
// cold and on a warm response cache (issue 31: a warm HEAD said `Content-Length: 0`). Through a listening server,
// since what matters is what Node puts on the wire.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { RESOURCES } from '../src/api/v0/resources.ts';
import { SEARCH_OPERATION_ID } from '../src/api/v0/search/search.routes.ts';

let t: TestApp;
let origin = '';
before(async () => {
  t = await buildTestApp({ importBundled: true });
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
after(() => t.close());

/** Every operation of the OpenAPI document (path parameters from its resource's example record), and the GeoJSON, CSV and calendar lists. */
async function urls(): Promise<{ url: string; headers: Record<string, string> }[]> {
  const doc = (await (await fetch(`${origin}/api/v0/openapi.json`)).json()) as {
    paths: Record<string, { get?: { operationId: string } }>;
  };
  const operations = new Map(RESOURCES.flatMap((r) => r.operations).map((op) => [op.operationId, op]));
  const found: { url: string; headers: Record<string, string> }[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    const id = methods.get?.operationId;
    if (!id) continue;
    if (id === SEARCH_OPERATION_ID) {
      found.push({ url: `${path}?q=juice%20shop`, headers: {} });
      continue;
    }
    const example = path.includes('{') ? await operations.get(id)?.example?.(t.database.db) : {};
    assert.ok(example, `${id}: no example record`);
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent((example as Record<string, string>)[name]!),
    );
    found.push({ url, headers: {} });
  }
  for (const list of ['chapters', 'events'])
    found.push({ url: `/api/v0/${list}/`, headers: { accept: 'application/geo+json' } });
  // CSV and iCalendar (issue 28), by Accept and by `format`.
  found.push(
    { url: '/api/v0/projects/', headers: { accept: 'text/csv' } },
    { url: '/api/v0/projects/?format=csv&group_by=level', headers: {} },
    { url: '/api/v0/events/', headers: { accept: 'text/calendar' } },
    { url: '/api/v0/events/?format=ics', headers: {} },
  );
  return found;
}

const SAME = ['content-length', 'content-type', 'etag', 'link', 'vary', 'cache-control', 'content-disposition'];

test('HEAD carries the length and headers of GET, cold and warm, for every list and detail', async () => {
  const all = await urls();
  assert.ok(all.length >= 20, `${all.length} addresses`);
  for (const { url, headers } of all) {
    for (const round of ['cold', 'warm']) {
      // Cold: HEAD first (nothing cached yet for it); warm: after a GET filled the cache.
      const head = await fetch(origin + url, { method: 'HEAD', headers });
      const get = await fetch(origin + url, { headers });
      const body = Buffer.from(await get.arrayBuffer());
      assert.equal(get.status, 200, `${url}: ${body}`);
      const warm = round === 'warm' ? await fetch(origin + url, { method: 'HEAD', headers }) : head;
      assert.equal(warm.status, 200, `${round} HEAD ${url}`);
      assert.equal((await warm.arrayBuffer()).byteLength, 0, `${round} HEAD ${url} has no body`);
      assert.equal(Number(get.headers.get('content-length')), body.length, `GET ${url}`);
      for (const name of SAME)
        assert.equal(warm.headers.get(name), get.headers.get(name), `${round} HEAD ${url}: ${name}`);
      // The dumps' manifest moves with builds, not with the data version: never kept by the response cache.
      if (round === 'warm' && !url.startsWith('/api/v0/dumps/'))
        assert.equal(warm.headers.get('x-cache'), 'HIT', `${url} was served from the cache`);
    }
  }
});
