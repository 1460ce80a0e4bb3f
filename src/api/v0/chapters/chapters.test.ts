import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chapter, member } from '../../../../test/factories.ts';
import { entityLeader, leader } from '../../../../test/factories-community.ts';
import { assertDateTime } from '../../../../test/lists.ts';
import { assertNotFound, useTestApp } from '../../../../test/resources.ts';
import { bumpDataVersion } from '../../../announcements/counters.queries.ts';

const api = useTestApp(async (db) => {
  await chapter(db, {
    key: 'london',
    name: 'OWASP London',
    country: 'United Kingdom',
    region: 'Europe',
    latitude: 51.5,
    longitude: -0.12,
  });
  const lisbon = await chapter(db, {
    key: 'lisbon',
    name: 'OWASP Lisbon',
    country: 'Portugal',
    latitude: 38.7,
    longitude: -9.1,
  });
  // A leader whose name is a member's login is that member; another is no member (key null).
  await member(db, { login: 'Psiinon', name: 'Simon' });
  await entityLeader(db, {
    chapter_id: lisbon,
    leader_id: (await leader(db, { key: 'psiinon', name: 'psiinon' })).id,
    position: 0,
  });
  await entityLeader(db, {
    chapter_id: lisbon,
    leader_id: (await leader(db, { key: 'nobody-here', name: 'Nobody Here' })).id,
    position: 1,
  });
  await chapter(db, { key: 'asleep', name: 'Inactive', is_active: false });
  await chapter(db, { key: 'nowhere', name: 'No coordinates', latitude: null, longitude: null });
});

const { get } = api;

test('the list shows only active chapters with coordinates, in the envelope', async () => {
  const res = await get('/api/v0/chapters/');
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.deepEqual(body.items.map((c: { key: string }) => c.key).sort(), ['lisbon', 'london']);
  assert.equal(body.count, 2);
  assert.equal(body.total_count, 2);
  assert.deepEqual(Object.keys(body.items[0]).sort(), [
    'created_at',
    'key',
    'latitude',
    'longitude',
    'name',
    'updated_at',
  ]);
  assertDateTime(body.items[0].created_at);
});

test('detail accepts the key with or without the prefix, any case; inactive is 404', async () => {
  for (const id of ['london', 'LONDON', 'www-chapter-london', 'WWW-Chapter-London']) {
    const res = await get(`/api/v0/chapters/${id}`);
    assert.equal(res.statusCode, 200, id);
    assert.equal(res.json().key, 'london');
    assert.deepEqual(res.json().leaders, []);
  }
  await assertNotFound(get, '/api/v0/chapters/', ['asleep', 'nowhere', 'paris'], 'Chapter not found');
});

test('leaders: key is the login of the member the leader is, else null', async () => {
  assert.deepEqual((await get('/api/v0/chapters/lisbon')).json().leaders, [
    { key: 'Psiinon', name: 'psiinon' },
    { key: null, name: 'Nobody Here' },
  ]);
});

test('invalid parameters are 400 with the contract body', async () => {
  for (const query of [
    'page=0',
    'page=x',
    'limit=101',
    'limit=0',
    'limit=1e2',
    'ordering=name',
    'latitude_gte=91',
    'longitude_lte=abc',
  ]) {
    const res = await get(`/api/v0/chapters/?${query}`);
    assert.equal(res.statusCode, 400, query);
    const body = res.json();
    assert.equal(body.message, 'Invalid request');
    assert.ok(Array.isArray(body.errors) && body.errors.length > 0 && Array.isArray(body.errors[0].loc), query);
  }
});

test('NUL characters in a parameter are a 400, never a database error', async () => {
  for (const url of [
    '/api/v0/chapters/?country=%00',
    '/api/v0/chapters/?country=a%00b',
    '/api/v0/chapters/%00',
    '/api/v0/chapters/lon%00don',
  ]) {
    const res = await get(url);
    assert.equal(res.statusCode, 400, url);
    assert.equal(res.json().message, 'Invalid request');
  }
});

test('totals follow a data change at once (counts are kept per data version)', async () => {
  const before = (await get('/api/v0/chapters/?limit=1')).json().count;
  assert.equal((await get('/api/v0/chapters/?limit=1&page=2')).json().count, before);
  const { app, database } = api.t;
  await chapter(database.db, { key: 'newcomer', name: 'OWASP Newcomer' });
  app.shared.watcher.set(await bumpDataVersion(database.db));
  assert.equal((await get('/api/v0/chapters/?limit=1&page=2')).json().count, before + 1);
});
