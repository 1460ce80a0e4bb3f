import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Selectable } from 'kysely';
import type { SponsorTable } from '../../../db/schema.ts';
import { sponsor } from '../../../../test/factories-community.ts';
import {
  assertDefaultOrdering,
  assertInvalid,
  assertOrderings,
  assertPagination,
  assertUnknownOrdering,
  itemKeys,
  keysInOrder,
} from '../../../../test/lists.ts';
import { assertDetail, assertHead, assertNotFound, useTestApp } from '../../../../test/resources.ts';

const PATH = '/api/v0/sponsors/';

/** The sponsor with every field set: what its detail must answer. */
const ACME = {
  key: 'Acme-Corp',
  name: 'acme',
  sponsor_type: 'Diamond',
  description: 'Builds everything.',
  url: 'https://acme.example',
  image_url: 'https://acme.example/logo.png',
  job_url: 'https://acme.example/jobs',
  is_member: true,
  member_type: 'Gold',
};

type Sponsor = Selectable<SponsorTable>;
let sponsors: Sponsor[];
const api = useTestApp(async (db) => {
  // Equal names with keys against the ids, so that only the id can break the ties; types in mixed case.
  sponsors = [
    await sponsor(db, ACME),
    await sponsor(db, { key: 'zinc', name: 'zinc', sponsor_type: 'diamond', is_member: true, member_type: 'gold' }),
    await sponsor(db, {
      key: 'yarrow',
      name: 'bolt',
      sponsor_type: 'Platinum',
      is_member: true,
      member_type: 'Silver',
    }),
    await sponsor(db, { key: 'xylo', name: 'acme', sponsor_type: 'Diamond' }),
    await sponsor(db, { key: 'wren', name: 'cobalt', sponsor_type: 'PLATINUM', is_member: false }),
    await sponsor(db, { key: 'vane', name: 'bolt' }),
    await sponsor(db, { key: 'umbra', name: 'delta', sponsor_type: 'Diamond', is_member: true, member_type: 'GOLD' }),
  ];
});

const { get } = api;
const inOrder = (rows: Sponsor[], ordering = 'name') => keysInOrder(rows, ordering, 'key');

test('the list shows every sponsor, by name by default, with the list item fields', async () => {
  await assertDefaultOrdering(get, PATH, sponsors, 'name');
  const items = (await get(PATH)).json().items;
  assert.deepEqual(
    items.find((i: { key: string }) => i.key === 'Acme-Corp'),
    {
      key: 'Acme-Corp',
      name: 'acme',
      sponsor_type: 'Diamond',
      is_member: true,
      member_type: 'Gold',
      url: 'https://acme.example',
      image_url: 'https://acme.example/logo.png',
    },
  );
  assert.deepEqual(
    items.find((i: { key: string }) => i.key === 'vane'),
    {
      key: 'vane',
      name: 'bolt',
      sponsor_type: '',
      is_member: false,
      member_type: '',
      url: '',
      image_url: '',
    },
  );
  for (const item of items)
    assert.deepEqual(Object.keys(item), [
      'key',
      'name',
      'sponsor_type',
      'is_member',
      'member_type',
      'url',
      'image_url',
    ]);
});

test('name and -name; id breaks ties; a repeated or unknown ordering is 400 naming the allowed values', async () => {
  await assertOrderings(get, PATH, sponsors, ['name', '-name']);
  await assertUnknownOrdering(get, PATH, ['name', '-name']);
  assertInvalid(await get(`${PATH}?ordering=name,-name`), 'query', 'ordering');
  assertInvalid(await get(`${PATH}?ordering=created_at`), 'query', 'ordering');
});

test('is_member: yes/no spellings in any case; empty is ignored; anything else is 400', async () => {
  for (const [value, member] of [
    ['true', true],
    ['YES', true],
    ['1', true],
    ['false', false],
    ['No', false],
    ['off', false],
  ] as const) {
    const res = await get(`${PATH}?is_member=${value}`);
    assert.equal(res.statusCode, 200, value);
    assert.deepEqual(itemKeys(res), inOrder(sponsors.filter((s) => s.is_member === member)), value);
  }
  assert.deepEqual(itemKeys(await get(`${PATH}?is_member=`)), inOrder(sponsors));
  for (const bad of ['maybe', 'member', '2'])
    assertInvalid(await get(`${PATH}?is_member=${bad}`), 'query', 'is_member', bad);
});

test('member_type and sponsor_type: case-insensitive equality, combinable; empty is ignored; too long is 400', async () => {
  const cases: [string, (s: Sponsor) => boolean][] = [
    ['member_type=gold', (s) => s.member_type.toLowerCase() === 'gold'],
    ['member_type=GOLD', (s) => s.member_type.toLowerCase() === 'gold'],
    ['member_type=Silver', (s) => s.member_type === 'Silver'],
    ['member_type=gol', () => false],
    ['sponsor_type=diamond', (s) => s.sponsor_type.toLowerCase() === 'diamond'],
    ['sponsor_type=Platinum', (s) => s.sponsor_type.toLowerCase() === 'platinum'],
    ['sponsor_type=platinum&is_member=false', (s) => s.sponsor_type.toLowerCase() === 'platinum' && !s.is_member],
    [
      'sponsor_type=DIAMOND&member_type=gold&ordering=-name',
      (s) => s.sponsor_type.toLowerCase() === 'diamond' && s.member_type.toLowerCase() === 'gold',
    ],
    ['member_type=&sponsor_type=', () => true],
  ];
  for (const [query, match] of cases) {
    const res = await get(`${PATH}?${query}`);
    assert.equal(res.statusCode, 200, query);
    assert.deepEqual(itemKeys(res), inOrder(sponsors.filter(match), query.includes('-name') ? '-name' : 'name'), query);
  }
  for (const name of ['member_type', 'sponsor_type'])
    assertInvalid(await get(`${PATH}?${name}=${'x'.repeat(201)}`), 'query', name);
});

test('pagination: pages, past the end, limit and page_size bounds, Link header', async () => {
  await assertPagination(get, PATH, inOrder(sponsors));
});

test('detail: the key in any case, every detail field; a missing key is 404', async () => {
  await assertDetail(get, PATH, ['Acme-Corp', 'acme-corp', 'ACME-CORP'], ACME);
  await assertNotFound(get, PATH, ['nothing', 'acme', 'www-sponsor-acme-corp'], 'Sponsor not found');
});

test('HEAD answers the list and the detail with 200 and no body', async () => {
  await assertHead(api, PATH, '/api/v0/sponsors/acme-corp');
});
