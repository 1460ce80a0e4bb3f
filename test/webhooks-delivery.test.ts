// Webhook deliveries (issue 43, docs/changes.md "Webhooks"): real writes become changes, each sent to a receiver on
// 127.0.0.1 as a Standard Webhooks message that the `standardwebhooks` package verifies; retries on the injected clock,
// disabling, replay, rotation, a crash mid-delivery, two instances, and the address checks at every delivery.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildTestApp, type TestApp } from './app.ts';
import { devSignIn, graphql, type Browser } from './auth.ts';
import { fakeClock, type FakeClock } from './fake-clock.ts';
import { chapter } from './factories.ts';
import { committee } from './factories-community.ts';
import { openDatabase } from '../src/db/index.ts';
import { startPgbouncer } from './pgbouncer-server.ts';
import { startReceiver, verify, type Answer, type Receiver } from './webhook-receiver.ts';
import { startWebhookDeliveries, type WebhookDeliveries } from '../src/webhooks/webhook-delivery.ts';
import type { WebhookSettings } from '../src/config.ts';
import type { Lookup } from '../src/webhooks/webhook-targets.ts';

const KEY = 'test-webhook-secrets-key-0123456789abcdef';
const ENV = { AUTH_DEV_LOGIN: 'true', WEBHOOK_SECRETS_KEY: KEY, WEBHOOKS_ALLOW_PRIVATE: 'true' };
const HOUR = 3_600_000;

let t: TestApp;
let clock: FakeClock;
let receiver: Receiver;
const workers: WebhookDeliveries[] = [];
const workerLogs: string[] = [];
let login = 0;

before(async () => {
  clock = fakeClock(Date.now());
  t = await buildTestApp({ env: ENV, captureLogs: true, clock: clock.now });
  receiver = await startReceiver();
  receiver.answer = (request) => {
    const answer = answers.get(request.path);
    return answer ? answer(receiver.received.filter((r) => r.path === request.path).length) : 204;
  };
});
afterEach(() => cleanUp());
after(async () => {
  await Promise.all(workers.map((worker) => worker.stop()));
  await receiver?.close();
  await t?.close();
});

/** This instance's delivery worker, on the test's clock; it looks only when kicked (no timer of its own in effect). */
function startWorker(
  settings: Partial<WebhookSettings> = {},
  options: { lookup?: Lookup; leaseMs?: number; concurrency?: number; db?: TestApp['database']['db'] } = {},
): WebhookDeliveries {
  const log = (level: string) => (object: object, message: string) =>
    workerLogs.push(`${level} ${message} ${JSON.stringify(object, Object.getOwnPropertyNames(object))}`);
  const worker = startWebhookDeliveries({
    db: options.db ?? t.database.db,
    settings: { ...t.config.webhooks, ...settings },
    clock: clock.now,
    log: { warn: log('warn'), error: log('error') },
    pollMs: 24 * HOUR,
    random: () => 0,
    ...(options.lookup ? { lookup: options.lookup } : {}),
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
    ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  });
  workers.push(worker);
  return worker;
}

async function signIn(): Promise<Browser> {
  return devSignIn(t, `hook-owner-${++login}`);
}

async function call<T>(browser: Browser, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await graphql(t, browser, query, variables);
  const body = res.json() as { data: T; errors?: unknown };
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

interface Hook {
  uuid: string;
  secret: string;
}

async function createHook(browser: Browser, url: string, filter: { resources?: string[]; types?: string[] } = {}) {
  const data = await call<{ createWebhook: { secret: string; webhook: { uuid: string } } }>(
    browser,
    `mutation ($url: String!, $resources: [String!], $types: [String!]) {
      createWebhook(url: $url, resources: $resources, types: $types) { secret webhook { uuid } } }`,
    { url, ...filter },
  );
  return { uuid: data.createWebhook.webhook.uuid, secret: data.createWebhook.secret };
}

interface HookState {
  uuid: string;
  enabled: boolean;
  disabledReason: string | null;
  failedAttempts: number;
  lastDeliveredChangeId: number;
}

async function state(browser: Browser, hook: Hook): Promise<HookState> {
  const data = await call<{ webhooks: HookState[] }>(
    browser,
    '{ webhooks { uuid enabled disabledReason failedAttempts lastDeliveredChangeId } }',
  );
  return data.webhooks.find((w) => w.uuid === hook.uuid)!;
}

async function deliveries(browser: Browser, hook: Hook) {
  const data = await call<{
    webhookDeliveries: {
      changeId: number;
      status: string;
      responseCode: number | null;
      responseBody: string | null;
      error: string | null;
    }[];
  }>(
    browser,
    'query ($id: UUID!) { webhookDeliveries(id: $id, limit: 50) { changeId status responseCode responseBody error } }',
    {
      id: hook.uuid,
    },
  );
  return data.webhookDeliveries;
}

/** The ids of the changes committed after `after`, oldest first. */
async function changeIds(after: number): Promise<number[]> {
  const { rows } = await sql<{ id: string }>`SELECT id FROM changes WHERE id > ${after} ORDER BY id`.execute(
    t.database.db,
  );
  return rows.map((row) => Number(row.id));
}

async function lastId(): Promise<number> {
  const { rows } = await sql<{ id: string | null }>`SELECT max(id) AS id FROM changes`.execute(t.database.db);
  return Number(rows[0]?.id ?? 0);
}

/** How the receiver answers at each path (204 elsewhere). */
const answers = new Map<string, (count: number) => Answer>();

/** After each test: its webhooks go, its workers stop, the receiver answers 204 again. */
async function cleanUp(): Promise<void> {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
  await t.database.db.deleteFrom('webhooks').execute();
  answers.clear();
}

let paths = 0;
/** A URL of the receiver of its own (a path), for one webhook. */
const hookUrl = () => `${receiver.url}/${++paths}`;
/** What came to that URL, in order. */
const receivedAt = (url: string) => {
  const path = new URL(url).pathname;
  return receiver.received.filter((request) => request.path === path);
};

test('every change a subscription covers, in id order, signed so that standardwebhooks verifies it; no secret in a log', async () => {
  const owner = await signIn();
  const allUrl = hookUrl();
  const all = await createHook(owner, allUrl);
  const someUrl = hookUrl();
  const some = await createHook(owner, someUrl, { resources: ['chapters'], types: ['chapter.updated'] });
  const start = await lastId();
  const id = await chapter(t.database.db, { name: 'Webhook One' });
  await chapter(t.database.db);
  await t.database.db.updateTable('chapters').set({ name: 'Webhook One, renamed' }).where('id', '=', id).execute();
  await t.database.db.deleteFrom('chapters').where('id', '=', id).execute();
  await committee(t.database.db);
  const ids = await changeIds(start);
  assert.equal(ids.length, 5);

  const worker = startWorker();
  await worker.idle();
  const toAll = receivedAt(allUrl);
  assert.deepEqual(
    toAll.map((request) => request.json.data.id),
    ids,
  );
  assert.deepEqual(
    toAll.map((request) => request.json.type),
    ['chapter.created', 'chapter.created', 'chapter.updated', 'chapter.deleted', 'committee.created'],
  );
  for (const request of toAll) {
    const payload = verify(all.secret, request) as { type: string; timestamp: string; data: { id: number } };
    assert.equal(payload.type, request.json.type);
    assert.equal(payload.data.id, request.json.data.id);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['webhook-id'], `msg_${all.uuid.replaceAll('-', '')}_${request.json.data.id}`);
    assert.match(request.headers['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(request.json.timestamp, (request.json.data as unknown as { occurred_at: string }).occurred_at);
    assert.throws(() => verify(some.secret, request), /signature/i, "another webhook's secret does not verify it");
  }
  // Each body is what the OpenAPI document's `webhooks` section says.
  const document = (await t.app.inject({ method: 'GET', url: '/api/v0/openapi.json' })).json() as {
    webhooks: { change: { post: { requestBody: { content: Record<string, { schema: object }> } } } };
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const valid = ajv.compile(document.webhooks.change.post.requestBody.content['application/json']!.schema);
  for (const request of toAll) assert.ok(valid(request.json), ajv.errorsText(valid.errors));
  const toSome = receivedAt(someUrl);
  assert.deepEqual(
    toSome.map((request) => request.json.type),
    ['chapter.updated'],
  );
  verify(some.secret, toSome[0]!);
  const attempts = await deliveries(owner, all);
  assert.deepEqual(
    attempts.map((a) => [a.changeId, a.status, a.responseCode]),
    ids.toReversed().map((change) => [change, 'delivered', 204]),
  );
  assert.equal((await state(owner, some)).lastDeliveredChangeId, ids.at(-1), 'the cursor passes what it skips');
  const logs = t.logs() + workerLogs.join('\n');
  for (const secret of [all.secret, some.secret]) assert.ok(!logs.includes(secret.slice(6)));
});

test('a receiver down for a while, then up, gets every change once its retries come; another endpoint is not held up', async () => {
  const owner = await signIn();
  const downUrl = hookUrl();
  const down = await createHook(owner, downUrl);
  const stuckUrl = hookUrl();
  await createHook(owner, stuckUrl);
  const healthyUrl = hookUrl();
  await createHook(owner, healthyUrl);
  let up = false;
  answers.set(new URL(downUrl).pathname, (count) => (up ? 204 : count === 1 ? 500 : 'drop'));
  // This one does not answer while the others are served.
  let stuck = true;
  answers.set(new URL(stuckUrl).pathname, () => (stuck ? 'hold' : 204));
  const start = await lastId();
  for (let i = 0; i < 3; i++) await chapter(t.database.db);
  const ids = await changeIds(start);

  const worker = startWorker();
  worker.kick();
  await until(() => receivedAt(healthyUrl).length === 3 && receivedAt(downUrl).length === 1);
  assert.deepEqual(
    receivedAt(healthyUrl).map((r) => r.json.data.id),
    ids,
    'the healthy endpoint has everything while the others fail or hang',
  );
  assert.equal(receivedAt(stuckUrl).length, 1);
  assert.equal(receivedAt(downUrl).length, 1);
  stuck = false;
  receiver.releaseHeld(204);
  let hook = await state(owner, down);
  assert.equal(hook.failedAttempts, 1);

  clock.advance(4_999); // the first retry comes after WEBHOOK_RETRY_MIN_MS (jitter 0 here)
  await idle(worker);
  assert.equal(receivedAt(downUrl).length, 1, 'not before its time');
  clock.advance(1);
  await idle(worker);
  assert.equal(receivedAt(downUrl).length, 2, 'the second attempt: the connection dropped');
  clock.advance(9_999); // then twice as long
  await idle(worker);
  assert.equal(receivedAt(downUrl).length, 2);
  up = true;
  clock.advance(1);
  await idle(worker);
  const got = receivedAt(downUrl);
  assert.deepEqual(
    got.map((r) => r.json.data.id),
    [ids[0], ids[0], ids[0], ids[1], ids[2]],
  );
  assert.equal(new Set(got.slice(0, 3).map((r) => r.headers['webhook-id'])).size, 1, 'a retry keeps its webhook-id');
  for (const request of got) verify(down.secret, request);
  hook = await state(owner, down);
  assert.deepEqual([hook.enabled, hook.failedAttempts, hook.lastDeliveredChangeId], [true, 0, ids[2]]);
  const attempts = (await deliveries(owner, down)).toReversed();
  assert.deepEqual(
    attempts.map((a) => [a.changeId, a.status, a.responseCode]),
    [
      [ids[0], 'failed', 500],
      [ids[0], 'failed', null],
      [ids[0], 'delivered', 204],
      [ids[1], 'delivered', 204],
      [ids[2], 'delivered', 204],
    ],
  );
  assert.equal(attempts[0]!.responseBody!.length, 1024, 'at most 1 kB of an answer is kept');
  assert.ok(attempts[1]!.error);
  assert.equal(receivedAt(stuckUrl).length, 3);
});

test('a redirect is not followed: it is a failed attempt, and the address it names gets nothing', async () => {
  const owner = await signIn();
  const url = hookUrl();
  const elsewhere = hookUrl();
  const hook = await createHook(owner, url);
  answers.set(new URL(url).pathname, () => 307);
  await chapter(t.database.db);
  const worker = startWorker();
  await idle(worker);
  assert.equal(receivedAt(url).length, 1);
  assert.equal(receivedAt(elsewhere).length, 0);
  const [attempt] = await deliveries(owner, hook);
  assert.deepEqual([attempt!.status, attempt!.responseCode], ['failed', 307]);
});

test('a 410 answer disables the endpoint at once; failing past WEBHOOK_RETRY_MAX_HOURS disables it; a replay enables it', async () => {
  const owner = await signIn();
  const goneUrl = hookUrl();
  const gone = await createHook(owner, goneUrl);
  const failingUrl = hookUrl();
  const failing = await createHook(owner, failingUrl);
  answers.set(new URL(goneUrl).pathname, () => 410);
  let failingUp = false;
  answers.set(new URL(failingUrl).pathname, () => (failingUp ? 204 : 503));
  const start = await lastId();
  await chapter(t.database.db);
  await chapter(t.database.db);
  assert.equal((await changeIds(start)).length, 2);
  const worker = startWorker({ retryMaxHours: 1 });
  await idle(worker);
  const goneState = await state(owner, gone);
  assert.equal(goneState.enabled, false);
  assert.match(goneState.disabledReason!, /410/);
  assert.equal(receivedAt(goneUrl).length, 1);

  for (let step = 0; step < 200 && (await state(owner, failing)).enabled; step++) {
    clock.advance(60_000);
    await idle(worker);
  }
  const failed = await state(owner, failing);
  assert.equal(failed.enabled, false);
  assert.match(failed.disabledReason!, /failed for 1 hours since .*HTTP 503.*Replay/);
  const attempts = receivedAt(failingUrl).length;
  assert.ok(attempts > 5 && attempts < 15, `${attempts} attempts in an hour, with backoff`);
  await chapter(t.database.db);
  clock.advance(HOUR);
  await idle(worker);
  assert.equal(receivedAt(goneUrl).length, 1, 'a disabled endpoint gets nothing more');
  assert.equal(receivedAt(failingUrl).length, attempts);

  failingUp = true;
  await call(owner, 'mutation ($id: UUID!) { replayWebhook(id: $id) { uuid } }', { id: failing.uuid });
  await idle(worker);
  assert.equal((await state(owner, failing)).enabled, true);
  const got = receivedAt(failingUrl).slice(attempts);
  assert.deepEqual(
    got.map((r) => r.json.data.id),
    await changeIds(start),
    'the changes it missed and the one since, in order',
  );
});

test('replay by change ids and by times sends those changes again, with the same webhook-id', async () => {
  const owner = await signIn();
  const url = hookUrl();
  const hook = await createHook(owner, url);
  const start = await lastId();
  for (let i = 0; i < 4; i++) await chapter(t.database.db);
  const ids = await changeIds(start);
  const worker = startWorker();
  await idle(worker);
  assert.equal(receivedAt(url).length, 4);
  const first = receivedAt(url).map((r) => r.headers['webhook-id']);

  await call(
    owner,
    'mutation ($id: UUID!, $a: Float, $u: Float) { replayWebhook(id: $id, afterId: $a, untilId: $u) { uuid } }',
    {
      id: hook.uuid,
      a: ids[0],
      u: ids[2],
    },
  );
  await idle(worker);
  const again = receivedAt(url).slice(4);
  assert.deepEqual(
    again.map((r) => r.json.data.id),
    [ids[1], ids[2]],
  );
  assert.deepEqual(
    again.map((r) => r.headers['webhook-id']),
    [first[1], first[2]],
  );
  for (const request of again) verify(hook.secret, request);

  // A time names a change to the millisecond: two inserts of a fast machine can share one, so the last change is
  // moved a second on (the replay by time is what is tested, not the clock's resolution).
  await sql`UPDATE changes SET occurred_at = occurred_at + interval '1 second' WHERE id = ${ids[3]}`.execute(
    t.database.db,
  );
  const { rows } = await sql<{ at: Date }>`SELECT occurred_at AS at FROM changes WHERE id = ${ids[3]}`.execute(
    t.database.db,
  );
  await call(owner, 'mutation ($id: UUID!, $s: DateTime) { replayWebhook(id: $id, since: $s) { uuid } }', {
    id: hook.uuid,
    s: new Date(rows[0]!.at).toISOString(),
  });
  await idle(worker);
  assert.deepEqual(
    receivedAt(url)
      .slice(6)
      .map((r) => r.json.data.id),
    [ids[3]],
  );
});

test('after a rotation both secrets verify for 24 hours, then only the new one', async () => {
  const owner = await signIn();
  const url = hookUrl();
  const hook = await createHook(owner, url);
  const rotated = await call<{ rotateWebhookSecret: { secret: string } }>(
    owner,
    'mutation ($id: UUID!) { rotateWebhookSecret(id: $id) { secret } }',
    { id: hook.uuid },
  );
  const fresh = rotated.rotateWebhookSecret.secret;
  await chapter(t.database.db);
  const worker = startWorker();
  await idle(worker);
  const [during] = receivedAt(url);
  assert.equal(during!.headers['webhook-signature']!.split(' ').length, 2);
  verify(hook.secret, during!);
  verify(fresh, during!);
  clock.advance(24 * HOUR + 1000);
  await chapter(t.database.db);
  await idle(worker);
  const [, later] = receivedAt(url);
  assert.equal(later!.headers['webhook-signature']!.split(' ').length, 1);
  verify(fresh, later!);
  assert.throws(() => verify(hook.secret, later!), /signature/i);
});

test('a crash mid-delivery loses nothing: another instance takes over once the lease ends, sending at most the message in flight again', async () => {
  const owner = await signIn();
  const url = hookUrl();
  const hook = await createHook(owner, url);
  answers.set(new URL(url).pathname, (count) => (count === 1 ? 'hold' : 204));
  const start = await lastId();
  for (let i = 0; i < 3; i++) await chapter(t.database.db);
  const ids = await changeIds(start);
  // The first instance sends the first change and hangs there, as a process that died would: its lease stays.
  const crashed = startWorker({}, { leaseMs: 60_000 });
  await until(() => receivedAt(url).length === 1);
  const second = await buildTestApp({ env: ENV, sharedDatabase: t.database, clock: clock.now });
  try {
    const worker = startWorker({}, { leaseMs: 60_000, db: second.database.db });
    await idle(worker);
    assert.equal(receivedAt(url).length, 1, 'the lease is still held');
    clock.advance(60_001);
    await idle(worker);
    assert.deepEqual(
      receivedAt(url).map((r) => r.json.data.id),
      [ids[0], ids[0], ids[1], ids[2]],
    );
    // The first instance's answer comes at last: it has lost the lease and sends nothing more.
    receiver.releaseHeld(204);
    await crashed.stop();
    await chapter(t.database.db);
    await idle(worker);
    const got = receivedAt(url).map((r) => r.json.data.id);
    assert.equal(got.length, 5);
    assert.equal(got[4], ids[2]! + 1);
    for (const request of receivedAt(url)) verify(hook.secret, request);
  } finally {
    await cleanUp();
    await second.close();
  }
});

test('a graceful stop does not wait for a hanging endpoint: the lease goes back and the next instance sends at once', async () => {
  const owner = await signIn();
  const url = hookUrl();
  const hook = await createHook(owner, url);
  answers.set(new URL(url).pathname, (count) => (count === 1 ? 'hold' : 204));
  const start = await lastId();
  await chapter(t.database.db);
  await chapter(t.database.db);
  const ids = await changeIds(start);
  const stopping = startWorker({}, { leaseMs: 60_000 });
  await until(() => receivedAt(url).length === 1);
  await stopping.stop();
  const next = startWorker();
  await idle(next);
  assert.deepEqual(
    receivedAt(url).map((r) => r.json.data.id),
    [ids[0], ids[0], ids[1]],
    'no clock moved: the lease was given back',
  );
  const attempts = await deliveries(owner, hook);
  assert.ok(
    attempts.every((a) => a.status === 'delivered'),
    'the cut attempt is not counted as a failure',
  );
  receiver.releaseHeld(204);
});

test('two instances deliver each message once (on PostgreSQL, the second one through PgBouncer in transaction mode)', async () => {
  const owner = await signIn();
  const urls = [hookUrl(), hookUrl(), hookUrl(), hookUrl()];
  for (const url of urls) await createHook(owner, url);
  const start = await lastId();
  for (let i = 0; i < 10; i++) await chapter(t.database.db);
  const ids = await changeIds(start);
  // On the server, the other instance has connections of its own, through the pooler; on PGlite, the same database.
  const bouncer = t.database.url ? await startPgbouncer(t.database.url) : undefined;
  const pooled = bouncer
    ? await openDatabase({
        databaseUrl: bouncer.url(new URL(t.database.url!).pathname.slice(1)),
        poolMode: 'transaction',
        poolSize: 5,
      })
    : undefined;
  try {
    const one = startWorker({}, { concurrency: 2 });
    const two = startWorker({}, { concurrency: 2, db: pooled?.db ?? t.database.db });
    await Promise.all([idle(one), idle(two)]);
    await Promise.all([idle(one), idle(two)]);
    for (const url of urls)
      assert.deepEqual(
        receivedAt(url).map((r) => r.json.data.id),
        ids,
        url,
      );
  } finally {
    await cleanUp();
    await pooled?.close();
    await bouncer?.destroy();
  }
});

test('the address is checked again at every delivery: a target now private, or a name now resolving inside, is refused', async () => {
  const owner = await signIn();
  const url = hookUrl();
  const hook = await createHook(owner, url);
  await chapter(t.database.db);
  // The same webhook, on an instance where private targets are not allowed.
  const strict = startWorker({ allowPrivate: false });
  await idle(strict);
  assert.equal(receivedAt(url).length, 0);
  const [attempt] = await deliveries(owner, hook);
  assert.equal(attempt!.status, 'refused');
  assert.match(attempt!.error!, /must use https/);

  await t.database.db.deleteFrom('webhooks').execute();
  // A name that resolved to a public address when registered, and to 127.0.0.1 at delivery (DNS rebinding).
  const names: Record<string, string> = { 'hooks.example.org': '93.184.215.14' };
  const lookup: Lookup = (name) => Promise.resolve([{ address: names[name]!, family: 4 }]);
  const app = await buildTestApp({
    env: { ...ENV, WEBHOOKS_ALLOW_PRIVATE: 'false' },
    sharedDatabase: t.database,
    webhookLookup: lookup,
  });
  try {
    const other = await devSignIn(app, 'rebinding-owner');
    const res = await graphql(
      app,
      other,
      'mutation { createWebhook(url: "https://hooks.example.org/in") { webhook { uuid } } }',
    );
    const uuid = (res.json() as { data: { createWebhook: { webhook: { uuid: string } } } }).data.createWebhook.webhook
      .uuid;
    names['hooks.example.org'] = '127.0.0.1';
    await chapter(t.database.db);
    const worker = startWorker({ allowPrivate: false }, { lookup });
    await idle(worker);
    const { rows } = await sql<{ status: string; error: string }>`
      SELECT status, error FROM webhook_attempts a JOIN webhooks w ON w.id = a.webhook_id WHERE w.uuid = ${uuid}`.execute(
      t.database.db,
    );
    assert.deepEqual(
      rows.map((row) => row.status),
      ['refused'],
    );
    assert.match(rows[0]!.error, /resolves to 127\.0\.0\.1/);
  } finally {
    await cleanUp();
    await app.close();
  }
});

test('an instance with another WEBHOOK_SECRETS_KEY sends nothing unsigned: the attempt fails and is retried later', async () => {
  const owner = await signIn();
  const url = hookUrl();
  const hook = await createHook(owner, url);
  await chapter(t.database.db);
  const worker = startWorker({ secretsKey: 'another-webhook-secrets-key-0123456789' });
  await idle(worker);
  assert.equal(receivedAt(url).length, 0);
  const attempts = await deliveries(owner, hook);
  assert.deepEqual(
    attempts.map((a) => a.status),
    ['failed'],
  );
  assert.match(attempts[0]!.error!, /WEBHOOK_SECRETS_KEY is not the key it was sealed with/);
  const state_ = await state(owner, hook);
  assert.equal(state_.failedAttempts, 1);
});

/** Runs the worker until nothing is due (a look at once, then the endpoints it found). */
async function idle(worker: WebhookDeliveries): Promise<void> {
  await worker.idle();
}

/** Waits for a condition that the worker's work makes true (checked at each turn of the event loop, no timer). */
async function until(condition: () => boolean): Promise<void> {
  for (let turns = 0; !condition(); turns++) {
    assert.ok(turns < 1_000_000, 'the condition comes true');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
