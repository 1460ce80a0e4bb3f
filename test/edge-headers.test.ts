// The headers of public answers (issue 44, docs/edge.md): with REST_AUTH=optional and EDGE_MAX_AGE_S, a keyless read
// is public and tagged, with nothing of its caller; anything keyed, any error but 404 and the feeds are not; without
// the anonymous mode or with EDGE_MAX_AGE_S=0 nothing is public.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { chapter, issue, repository } from './factories.ts';
import { milestone } from './factories-github.ts';
import { upsertLocalUser } from '../src/auth/users.queries.ts';
import { createApiKey } from '../src/api-keys/api-keys.service.ts';
import { publicCacheControl } from '../src/api/v0/rest/edge-headers.ts';

const tagsOf = (headers: Record<string, unknown>) => String(headers['surrogate-key'] ?? '').split(' ');

describe('public answers for an edge', () => {
  let t: TestApp;
  let key: string;
  before(async () => {
    t = await buildTestApp({ env: { EDGE_MAX_AGE_S: '120' } });
    await chapter(t.database.db, { key: 'edge-one', country: 'Estonia' });
    await chapter(t.database.db, { key: 'edge two', country: 'Estonia' });
    await t.app.shared.watcher.refresh();
    const user = await upsertLocalUser(t.database.db, 'edge-headers');
    const created = await createApiKey(t.database.db, user.id, 'k', new Date(Date.now() + 86_400_000));
    assert.ok(created.ok);
    key = created.rawKey;
  });
  after(() => t?.close());

  it('a keyless list page: public, tagged with the list, its records and the data version, nothing of its caller', async () => {
    for (const round of ['cold', 'warm']) {
      const res = await t.app.inject('/api/v0/chapters/?country=Estonia');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], publicCacheControl(120), round);
      assert.equal(
        res.headers['cache-control'],
        'public, max-age=0, s-maxage=120, stale-while-revalidate=30, stale-if-error=86400',
      );
      const tags = tagsOf(res.headers);
      assert.deepEqual(tags.slice(0, 3).sort(), ['chapters', 'chapters:edge%20two', 'chapters:edge-one'], round);
      assert.match(tags.at(-1)!, /^dv:\d+$/);
      assert.equal(res.headers['cache-tag'], tags.join(','));
      for (const name of ['x-request-id', 'ratelimit', 'ratelimit-remaining', 'ratelimit-policy', 'x-cache'])
        assert.equal(res.headers[name], undefined, `${round}: ${name}`);
      assert.match(String(res.headers.vary), /X-API-Key/);
      assert.ok(res.headers.etag);
      // One stored answer serves pages and other clients alike: the CORS fields always, no Vary on Origin.
      assert.equal(res.headers['access-control-allow-origin'], '*', round);
      assert.doesNotMatch(String(res.headers.vary), /Origin/, round);
      const fromPage = await t.app.inject({
        url: '/api/v0/chapters/?country=Estonia',
        headers: { origin: 'https://elsewhere.example' },
      });
      assert.equal(fromPage.headers['access-control-allow-origin'], '*', round);
      assert.equal(fromPage.headers.vary, res.headers.vary, round);
    }
  });

  it('a detail and its 404 name the record; GeoJSON and CSV the list', async () => {
    const found = await t.app.inject('/api/v0/chapters/edge-one');
    assert.deepEqual(tagsOf(found.headers).slice(0, 1), ['chapters:edge-one']);
    assert.ok(!tagsOf(found.headers).includes('chapters'), 'a detail is not purged with every change of its list');
    const missing = await t.app.inject('/api/v0/chapters/nowhere');
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['cache-control']), /^public/);
    assert.deepEqual(tagsOf(missing.headers).slice(0, 1), ['chapters:nowhere']);
    const geo = await t.app.inject({
      url: '/api/v0/chapters/?country=Estonia',
      headers: { accept: 'application/geo+json' },
    });
    assert.ok(tagsOf(geo.headers).includes('chapters:edge-one'));
    const csv = await t.app.inject('/api/v0/chapters/?country=Estonia&format=csv');
    assert.equal(tagsOf(csv.headers)[0], 'chapters');
    const search = await t.app.inject('/api/v0/search/?q=chapter');
    assert.ok(tagsOf(search.headers).includes('chapters') && tagsOf(search.headers).includes('projects'));
    // Each result by its record's tag, read from the page before it is written.
    const results = (search.json() as { items: { resource: string; id: string }[] }).items;
    assert.ok(results.length > 0, search.body);
    for (const { resource, id } of results)
      assert.ok(tagsOf(search.headers).includes(`${resource}:${id.replaceAll(' ', '%20')}`), `${resource}:${id}`);
  });

  it("issues and milestones on a list page are named by their GitHub address's repository and number", async () => {
    const repositoryId = await repository(t.database.db, { owner_login: 'edge-owner', name: 'edge-repo' });
    const addresses = [
      'https://github.com/edge-owner/edge-repo/issues/7',
      'https://github.com/edge-owner/edge-repo/pull/8',
      // Not a numbered address: no record tag (the list's own still covers it).
      'https://github.com/edge-owner/edge-repo/issues/9a',
      'https://github.com/edge-owner/edge-repo/discussions/10',
      'issues/11',
    ];
    for (const url of addresses) await issue(t.database.db, { repository_id: repositoryId, url, title: `edge ${url}` });
    await milestone(t.database.db, {
      repository_id: repositoryId,
      url: 'https://github.com/edge-owner/edge-repo/milestone/3',
    });
    await t.app.shared.watcher.refresh();
    for (const round of ['cold', 'warm']) {
      const issues = await t.app.inject('/api/v0/issues/?limit=100');
      assert.equal(issues.statusCode, 200, issues.body);
      const tags = tagsOf(issues.headers);
      assert.deepEqual(
        tags.filter((tag) => tag.startsWith('issues:')).sort(),
        ['issues:edge-owner/edge-repo/7', 'issues:edge-owner/edge-repo/8'],
        round,
      );
      assert.equal(tags[0], 'issues', round);
      const milestones = await t.app.inject('/api/v0/milestones/');
      assert.ok(tagsOf(milestones.headers).includes('milestones:edge-owner/edge-repo/3'), round);
    }
  });

  it('keyed answers, errors but 404, HEAD with a key and the feeds are never public', async () => {
    for (const headers of [{ 'x-api-key': key }, { 'x-api-key': 'cds_wrong' }, { 'x-api-key': '' }]) {
      const res = await t.app.inject({ url: '/api/v0/chapters/edge-one', headers });
      assert.doesNotMatch(String(res.headers['cache-control']), /public/);
      assert.equal(res.headers['surrogate-key'], undefined);
    }
    const wrong = await t.app.inject({ url: '/api/v0/chapters/edge-one', headers: { 'x-api-key': 'cds_wrong' } });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.headers['cache-control'], 'private, no-store');
    const invalid = await t.app.inject('/api/v0/chapters/?page=0');
    assert.equal(invalid.statusCode, 400);
    assert.equal(invalid.headers['cache-control'], 'private, no-store');
    for (const url of ['/api/v0/changes/', '/api/v0/deleted/', '/metrics']) {
      const res = await t.app.inject(url);
      assert.doesNotMatch(String(res.headers['cache-control'] ?? ''), /public/, url);
    }
  });

  it('nothing is public with REST_AUTH=required or EDGE_MAX_AGE_S=0', async () => {
    const envs: Record<string, string>[] = [{ REST_AUTH: 'required', EDGE_MAX_AGE_S: '120' }, { EDGE_MAX_AGE_S: '0' }];
    for (const env of envs) {
      const other = await buildTestApp({ sharedDatabase: t.database, env });
      try {
        const res = await other.app.inject({ url: '/api/v0/chapters/edge-one', headers: { 'x-api-key': key } });
        assert.equal(res.headers['cache-control'], 'private, no-cache');
        const anonymous = await other.app.inject('/api/v0/chapters/edge-one');
        assert.doesNotMatch(String(anonymous.headers['cache-control'] ?? ''), /public/);
      } finally {
        await other.close();
      }
    }
  });
});
