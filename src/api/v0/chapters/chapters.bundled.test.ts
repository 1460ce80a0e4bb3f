// The chapters of the bundled website data, through HTTP (issue 15): every active chapter with a real
// place is listed, countries match by code, name or spelling, and search ignores accents.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from '../../../../test/app.ts';
import { readOwaspData } from '../../../data/owasp/owasp.read.ts';
import { BUNDLED_DATA_DIR } from '../../../data/import/dataset.import.ts';
import path from 'node:path';

let api: TestApp;
let activeKeys: string[];

before(async () => {
  api = await buildTestApp({ importBundled: true });
  const data = await readOwaspData(path.join(BUNDLED_DATA_DIR, 'owasp'));
  activeKeys = data.chapters.filter((c) => c.isActive).map((c) => c.key);
});
after(() => api.close());

async function list(query: string): Promise<{ keys: string[]; total: number }> {
  const keys: string[] = [];
  let total = 0;
  for (let page = 1; ; page++) {
    const res = await api.app.inject({ method: 'GET', url: `/api/v0/chapters/?limit=100&page=${page}&${query}` });
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    const body = res.json() as { items: { key: string }[]; total_count: number; has_next: boolean };
    keys.push(...body.items.map((item) => item.key));
    total = body.total_count;
    if (!body.has_next) break;
  }
  return { keys, total };
}

test('every active chapter but Virtual is listed', async () => {
  const { keys } = await list('');
  assert.equal(activeKeys.length, 351);
  assert.deepEqual(
    activeKeys.filter((key) => !keys.includes(key)),
    ['virtual'],
  );
  assert.equal(keys.length, 350);
});

test('every listed chapter has a non-empty country and region', async () => {
  const { keys } = await list('');
  const bare: string[] = [];
  for (const key of keys) {
    const res = await api.app.inject({ method: 'GET', url: `/api/v0/chapters/${encodeURIComponent(key)}` });
    assert.equal(res.statusCode, 200, key);
    const { country, region } = res.json() as { country: string; region: string };
    if (!country.trim() || !region.trim()) bare.push(`${key}: "${country}" / "${region}"`);
  }
  assert.deepEqual(bare, []);
});

test('the country filter takes codes, names and common spellings', async () => {
  const india = await list('country=India');
  assert.ok(india.total >= 81, `India: ${india.total}`);
  assert.equal((await list('country=IN')).total, india.total);

  const turkey = await list('country=Turkey');
  assert.equal(turkey.total, 9, 'the 7 "Turkey" and 2 "Turkiye" chapters of the data');
  for (const name of ['Türkiye', 'Turkiye', 'TR', 'tr', 'TÜRKIYE']) {
    assert.deepEqual((await list(`country=${encodeURIComponent(name)}`)).keys.sort(), turkey.keys.sort(), name);
  }

  const us = await list('country=United%20States');
  assert.ok(us.total >= 60, `United States: ${us.total}`);
  for (const name of ['USA', 'US', 'United States of America'])
    assert.equal((await list(`country=${encodeURIComponent(name)}`)).total, us.total, name);

  const uk = await list('country=United%20Kingdom');
  assert.ok(uk.keys.includes('scotland') && uk.keys.includes('london'), 'Scotland is in the United Kingdom');
  for (const name of ['UK', 'GB', 'Great Britain', 'Scotland'])
    assert.equal((await list(`country=${encodeURIComponent(name)}`)).total, uk.total, name);

  assert.equal((await list('country=Saudi%20Arabia')).total, 2);
  assert.equal((await list('country=Atlantis')).total, 0, 'an unknown country matches nothing');
});

test('q takes the same country spellings', async () => {
  const turkey = await list('q=country:Turkey');
  assert.equal(turkey.total, 9);
  for (const name of ['Türkiye', 'TR', 'turkiye'])
    assert.equal((await list(`q=${encodeURIComponent(`country:${name}`)}`)).total, 9, name);
  assert.equal((await list(`q=${encodeURIComponent('country:india')}`)).total, (await list('country=India')).total);
});

test('q is accent-blind both ways', async () => {
  const cases: [string, string][] = [
    ['Diyarbakir', 'diyarbakir'], // stored as "OWASP Diyarbakır"
    ['Queretaro', 'queretaro'], // "OWASP Querétaro"
    ['Logrono', 'logrono'], // "OWASP Logroño"
    ['Bogotá', 'bogota'], // stored without the accent
    ['São Paulo', 'sao-paulo'],
    ['Sao Paulo', 'sao-paulo'],
    ['Goiania', 'goiania'],
  ];
  for (const [q, key] of cases) {
    const { keys } = await list(`q=${encodeURIComponent(q)}`);
    assert.ok(keys.includes(key), `${q} → ${keys.join(', ')}`);
  }
});
