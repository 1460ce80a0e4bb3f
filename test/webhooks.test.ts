// Webhooks managed through GraphQL by a signed-in user (issue 43, docs/changes.md "Webhooks"): the secret shown once
// and never stored or logged in the clear, the per-user limit, bad input refused with nothing changed, and every
// inside address refused when registered (no SSRF).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './app.ts';
import { devSignIn, graphql, type Browser } from './auth.ts';
import type { Lookup } from '../src/webhooks/webhook-targets.ts';

const KEY = 'test-webhook-secrets-key-0123456789abcdef';
/** Names the tests resolve themselves: no DNS. */
const NAMES: Record<string, string> = {
  'hooks.example.org': '93.184.215.14',
  'inside.example.org': '10.0.0.7',
  'rebound.example.org': '127.0.0.1',
  'v6-inside.example.org': 'fd00::1',
};
const lookup: Lookup = (name) => {
  const address = NAMES[name];
  if (!address) return Promise.reject(Object.assign(new Error(`ENOTFOUND ${name}`), { code: 'ENOTFOUND' }));
  return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
};

let t: TestApp;
let alice: Browser;
let bob: Browser;

before(async () => {
  t = await buildTestApp({
    env: { AUTH_DEV_LOGIN: 'true', WEBHOOK_SECRETS_KEY: KEY, WEBHOOKS_PER_USER: '5' },
    captureLogs: true,
    webhookLookup: lookup,
  });
  alice = await devSignIn(t, 'alice');
  bob = await devSignIn(t, 'bob');
});
after(() => t?.close());

const FIELDS =
  'uuid url resources types description enabled disabledReason lastDeliveredChangeId previousSecretExpiresAt';
const CREATE = `mutation ($url: String!, $resources: [String!], $types: [String!], $description: String) {
  createWebhook(url: $url, resources: $resources, types: $types, description: $description) { secret webhook { ${FIELDS} } } }`;

interface Node {
  uuid: string;
  url: string;
  resources: string[];
  types: string[];
  enabled: boolean;
  previousSecretExpiresAt: string | null;
}

async function call<T>(browser: Browser | undefined, query: string, variables: Record<string, unknown> = {}) {
  const res = await graphql(t, browser, query, variables);
  assert.ok(res.statusCode < 500, res.body);
  return res.json() as { data: T | null; errors?: { message: string; extensions?: { code?: string } }[] };
}

const create = (browser: Browser, variables: Record<string, unknown>) =>
  call<{ createWebhook: { secret: string; webhook: Node } }>(browser, CREATE, variables);

async function listed(browser: Browser): Promise<Node[]> {
  const body = await call<{ webhooks: Node[] }>(browser, `{ webhooks { ${FIELDS} } }`);
  assert.equal(body.errors, undefined);
  return body.data!.webhooks;
}

async function rowCount(): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhooks`.execute(t.database.db);
  return rows[0]!.n;
}

test('signed out: webhooks and createWebhook are refused', async () => {
  for (const query of [`{ webhooks { uuid } }`, CREATE]) {
    const body = await call(undefined, query, { url: 'https://hooks.example.org/in' });
    assert.equal(body.errors?.[0]?.extensions?.code, 'UNAUTHORIZED');
  }
});

test('createWebhook answers the webhook and its whsec_ secret once; neither the database nor a log holds it in the clear', async () => {
  const body = await create(alice, {
    url: 'https://hooks.example.org/in',
    resources: ['chapters', 'events'],
    types: ['chapter.created', 'event.deleted'],
    description: 'calendar sync',
  });
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  const { secret, webhook } = body.data!.createWebhook;
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
  assert.equal(webhook.url, 'https://hooks.example.org/in');
  assert.deepEqual(webhook.resources, ['chapters', 'events']);
  assert.deepEqual(webhook.types, ['chapter.created', 'event.deleted']);
  assert.equal(webhook.enabled, true);
  const mine = await listed(alice);
  assert.deepEqual(
    mine.map((w) => w.uuid),
    [webhook.uuid],
  );
  assert.ok(!JSON.stringify(mine).includes(secret.slice(6)));
  assert.deepEqual(await listed(bob), [], "another user's webhooks are not shown");
  const { rows } = await sql<Record<string, unknown>>`SELECT * FROM webhooks`.execute(t.database.db);
  const stored = JSON.stringify(rows);
  assert.ok(!stored.includes(secret.slice(6)), 'the database holds no secret in the clear');
  assert.ok(!stored.includes(Buffer.from(secret.slice(6), 'base64').toString('hex')));
  assert.ok(!t.logs().includes(secret.slice(6)), 'no log line holds the secret');
});

test('rotateWebhookSecret answers a new secret; the previous one signs for 24 hours more', async () => {
  const { data } = await create(alice, { url: 'https://hooks.example.org/rotate' });
  const { webhook, secret } = data!.createWebhook;
  const before = Date.now();
  const body = await call<{ rotateWebhookSecret: { secret: string; webhook: Node } }>(
    alice,
    `mutation ($id: UUID!) { rotateWebhookSecret(id: $id) { secret webhook { ${FIELDS} } } }`,
    { id: webhook.uuid },
  );
  assert.equal(body.errors, undefined);
  const rotated = body.data!.rotateWebhookSecret;
  assert.match(rotated.secret, /^whsec_/);
  assert.notEqual(rotated.secret, secret);
  const until = Date.parse(rotated.webhook.previousSecretExpiresAt!);
  assert.ok(until >= before + 24 * 3_600_000 - 1000 && until <= Date.now() + 24 * 3_600_000 + 1000);
  const bobs = await call(bob, `mutation ($id: UUID!) { rotateWebhookSecret(id: $id) { secret } }`, {
    id: webhook.uuid,
  });
  assert.equal(bobs.errors?.[0]?.extensions?.code, 'WEBHOOK_NOT_FOUND', "someone else's webhook is not found");
  assert.ok(!t.logs().includes(rotated.secret.slice(6)));
});

test('bad input is a clear error that changes nothing', async () => {
  const count = await rowCount();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ url: 'not a url' }, /not a valid absolute URL/],
    [{ url: 'ftp://hooks.example.org/' }, /must use https/],
    [{ url: 'https://user:pw@hooks.example.org/' }, /user name or password/],
    [{ url: `https://hooks.example.org/${'a'.repeat(2100)}` }, /longer than 2048/],
    [{ url: 'https://unknown.example.org/' }, /cannot be resolved/],
    [
      { url: 'https://hooks.example.org/', resources: ['chapters', 'recipes'] },
      /Unknown resource "recipes": allowed are chapters, /,
    ],
    [
      { url: 'https://hooks.example.org/', types: ['chapter.renamed'] },
      /Unknown type "chapter.renamed": allowed are chapter.created, /,
    ],
    [{ url: 'https://hooks.example.org/', description: 'x'.repeat(501) }, /longer than 500/],
  ];
  for (const [variables, message] of cases) {
    const body = await create(alice, variables);
    assert.equal(body.data, null, JSON.stringify(variables).slice(0, 80));
    assert.match(body.errors![0]!.message, message);
    assert.match(body.errors![0]!.extensions!.code!, /^WEBHOOK_(INVALID_INPUT|TARGET_REFUSED)$/);
  }
  const replay = `mutation ($id: UUID!, $a: Float, $u: Float, $s: DateTime) {
    replayWebhook(id: $id, afterId: $a, untilId: $u, since: $s) { uuid } }`;
  const [mine] = await listed(alice);
  for (const [variables, message] of [
    [{ a: 5, u: 2 }, /before its start/],
    [{ a: -1 }, /whole numbers/],
    [{ a: 1.5 }, /whole numbers/],
    [{ a: 1, s: '2026-01-01T00:00:00Z' }, /not both/],
  ] as const) {
    const body = await call(alice, replay, { id: mine!.uuid, ...variables });
    assert.match(body.errors?.[0]?.message ?? '', message);
  }
  const unknown = await call(alice, `mutation { deleteWebhook(id: "6f1c7a54-3d1e-4a8e-9c53-2d6f0b1e9a11") }`);
  assert.equal(unknown.errors?.[0]?.extensions?.code, 'WEBHOOK_NOT_FOUND');
  const malformed = await call(alice, `mutation { deleteWebhook(id: "nope") }`);
  assert.ok(malformed.errors?.length);
  assert.equal(await rowCount(), count);
});

test('no SSRF: loopback, private, link-local, CGNAT, unique-local, multicast and metadata targets are refused', async () => {
  const count = await rowCount();
  for (const url of [
    'https://127.0.0.1/',
    'https://127.1.2.3:8443/',
    'https://10.1.2.3/',
    'https://172.16.0.1/',
    'https://172.31.255.254/',
    'https://192.168.1.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/',
    'https://100.100.100.200/',
    'https://0.0.0.0/',
    'https://224.0.0.1/',
    'https://255.255.255.255/',
    'https://[::1]/',
    'https://[::]/',
    'https://[fe80::1]/',
    'https://[fc00::1]/',
    'https://[fd00:ec2::254]/',
    'https://[ff02::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://[::ffff:10.0.0.1]/',
    'https://2130706433/', // 127.0.0.1 as one number
    'https://0x7f.1/',
    'https://inside.example.org/',
    'https://rebound.example.org/',
    'https://v6-inside.example.org/',
    'http://hooks.example.org/',
  ]) {
    const body = await create(alice, { url });
    assert.equal(body.data, null, url);
    assert.match(body.errors![0]!.extensions!.code!, /^WEBHOOK_(TARGET_REFUSED)$/, url);
  }
  assert.equal(await rowCount(), count);
  const accepted = await create(bob, { url: 'https://93.184.215.14:8443/hook' });
  assert.equal(accepted.errors, undefined);
  assert.equal(await rowCount(), count + 1);
});

test('localhost, resolved by the system (its hosts file, no DNS), is refused', async () => {
  const plain = await buildTestApp({
    env: { AUTH_DEV_LOGIN: 'true', WEBHOOK_SECRETS_KEY: KEY },
    sharedDatabase: t.database,
  });
  try {
    const carol = await devSignIn(plain, 'carol');
    const res = await graphql(plain, carol, CREATE, { url: 'https://localhost:8443/' });
    const body = res.json() as { errors?: { message: string }[] };
    assert.match(body.errors?.[0]?.message ?? '', /localhost is or resolves to (127\.0\.0\.1|::1)/);
  } finally {
    await plain.close();
  }
});

test('at most WEBHOOKS_PER_USER webhooks: the sixth is refused, deleting one makes room', async () => {
  const dave = await devSignIn(t, 'dave');
  const uuids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const body = await create(dave, { url: `https://hooks.example.org/${i}` });
    assert.equal(body.errors, undefined);
    uuids.push(body.data!.createWebhook.webhook.uuid);
  }
  const sixth = await create(dave, { url: 'https://hooks.example.org/6' });
  assert.equal(sixth.errors?.[0]?.extensions?.code, 'WEBHOOK_LIMIT_REACHED');
  assert.match(sixth.errors![0]!.message, /at most 5 webhooks/);
  const notHis = await call(alice, `mutation ($id: UUID!) { deleteWebhook(id: $id) }`, { id: uuids[0] });
  assert.equal(notHis.errors?.[0]?.extensions?.code, 'WEBHOOK_NOT_FOUND');
  const deleted = await call<{ deleteWebhook: boolean }>(dave, `mutation ($id: UUID!) { deleteWebhook(id: $id) }`, {
    id: uuids[0],
  });
  assert.equal(deleted.data?.deleteWebhook, true);
  assert.equal((await listed(dave)).length, 4);
  assert.equal((await create(dave, { url: 'https://hooks.example.org/again' })).errors, undefined);
});

test('without WEBHOOK_SECRETS_KEY no webhook can be created, with a message saying so', async () => {
  const plain = await buildTestApp({ env: { AUTH_DEV_LOGIN: 'true' }, sharedDatabase: t.database });
  try {
    const erin = await devSignIn(plain, 'erin');
    const res = await graphql(plain, erin, CREATE, { url: 'https://93.184.215.14/' });
    const body = res.json() as { errors?: { message: string; extensions: { code: string } }[] };
    assert.equal(body.errors?.[0]?.extensions.code, 'WEBHOOKS_NOT_CONFIGURED');
    assert.match(body.errors![0]!.message, /WEBHOOK_SECRETS_KEY/);
  } finally {
    await plain.close();
  }
});

test('the OpenAPI document describes the message a webhook receives (its `webhooks` section)', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/api/v0/openapi.json' });
  const document = res.json() as {
    openapi: string;
    webhooks: Record<
      string,
      {
        post: {
          parameters: { name: string }[];
          requestBody: {
            content: Record<string, { schema: { required: string[]; properties: { type: { enum: string[] } } } }>;
          };
        };
      }
    >;
  };
  assert.equal(document.openapi, '3.1.0');
  const post = document.webhooks.change!.post;
  assert.deepEqual(
    post.parameters.map((p) => p.name),
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
  );
  const schema = post.requestBody.content['application/json']!.schema;
  assert.deepEqual(schema.required, ['type', 'timestamp', 'data']);
  assert.ok(
    schema.properties.type.enum.includes('chapter.created') && schema.properties.type.enum.includes('release.deleted'),
  );
});
