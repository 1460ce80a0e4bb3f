// POST /api/secret-scanning/ (issue 30): GitHub's secret-scanning partner reports, signed with a P-256 key that this
// test generates and serves from a stand-in of GitHub's API on 127.0.0.1. A valid report revokes the keys it names at
// once on every instance and says where they were found; a forged, tampered or replayed report, an unknown key
// identifier, a missing signature or an oversized body changes nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto, { type KeyObject } from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { addInstancesOnRedis, buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, type Browser } from './auth.ts';
import { chapter } from './factories.ts';
import { tickingTimers } from './fake-clock.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';
import { generateApiKey } from '../src/api-keys/api-keys.format.ts';
import { freePort } from './process.ts';
import { arrays } from './nesting.ts';
import { MAX_JSON_DEPTH } from '../src/http/json-nesting.ts';

interface Signer {
  identifier: string;
  privateKey: KeyObject;
  publicPem: string;
}

function newSigner(identifier: string): Signer {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { identifier, privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

const sign = (signer: Signer, body: string) =>
  crypto.sign('sha256', Buffer.from(body), { key: signer.privateKey, dsaEncoding: 'der' }).toString('base64');

/** GitHub's `GET /meta/public_keys/secret_scanning`, serving the keys of `published`, counting its requests. */
interface StandIn {
  url: string;
  published: Signer[];
  requests: number;
  close(): Promise<void>;
}

async function startStandIn(): Promise<StandIn> {
  const standIn = { published: [] as Signer[], requests: 0 } as StandIn;
  const server = http.createServer((request, response) => {
    if (request.url !== '/meta/public_keys/secret_scanning') return void response.writeHead(404).end('{}');
    standIn.requests++;
    const body = {
      public_keys: standIn.published.map((signer, index) => ({
        key_identifier: signer.identifier,
        key: signer.publicPem,
        is_current: index === standIn.published.length - 1,
      })),
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standIn.close = () => new Promise((resolve) => server.close(() => resolve()));
  return standIn;
}

let now = Date.now();
const clock = () => now;
const ENV = { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required' };

let github: StandIn;
let t: TestApp;
let browser: Browser;
const current = newSigner('bd5b5d2b3ab0e7e0e1f3bc3d7cfc5c32c6b0b13e1de7a1e4a0bbf4f0e7d6a1a1');
before(async () => {
  github = await startStandIn();
  github.published.push(current);
  t = await buildTestApp({
    env: { ...ENV, GITHUB_API_URL: github.url },
    clock,
    timers: tickingTimers(),
    captureLogs: true,
  });
  await chapter(t.database.db, { key: 'london', name: 'OWASP London' });
  browser = await devSignIn(t, 'leaker');
});
after(async () => {
  await t.close();
  await github.close();
});

async function newKey(target: TestApp, who: Browser, name: string): Promise<{ raw: string; uuid: string }> {
  const expiresAt = new Date(now + 30 * 86_400_000).toISOString();
  const created = (await graphql(target, who, DOC.createApiKey, { name, expiresAt })).json().data.createApiKey;
  assert.equal(created.ok, true, created.message);
  return { raw: created.rawKey, uuid: created.apiKey.uuid };
}

const report = (tokens: string[], url = 'https://github.com/someone/repo/blob/main/.env') =>
  JSON.stringify(tokens.map((token) => ({ token, type: 'cds_api_key', url, source: 'content' })));

function post(target: TestApp, body: string | Buffer, headers: Record<string, string>) {
  return target.app.inject({
    method: 'POST',
    url: '/api/secret-scanning/',
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
}

const signed = (target: TestApp, body: string, signer = current, signatureOf = body) =>
  post(target, body, {
    'github-public-key-identifier': signer.identifier,
    'github-public-key-signature': sign(signer, signatureOf),
  });

const works = async (target: TestApp, raw: string) =>
  (await target.app.inject({ method: 'GET', url: '/api/v0/chapters/london', headers: { 'x-api-key': raw } }))
    .statusCode === 200;

test('a valid report revokes the keys it names at once, labels every token, and says where the key was found', async () => {
  const leaked = await newKey(t, browser, 'leaked');
  const kept = await newKey(t, browser, 'kept');
  assert.ok(await works(t, leaked.raw));
  const unknown = generateApiKey().raw;
  const body = report([leaked.raw, 'cds_not-a-key', unknown]);
  const res = await signed(t, body);
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), [
    { token_raw: leaked.raw, token_type: 'cds_api_key', label: 'true_positive' },
    { token_raw: 'cds_not-a-key', token_type: 'cds_api_key', label: 'false_positive' },
    { token_raw: unknown, token_type: 'cds_api_key', label: 'false_positive' },
  ]);
  assert.equal(await works(t, leaked.raw), false, 'revoked at once');
  assert.ok(await works(t, kept.raw), 'a key not reported keeps working');

  const leaks = (
    await graphql(t, browser, 'query { leakedApiKeys { uuid name isRevoked leakUrl leakReportedAt } }')
  ).json().data.leakedApiKeys;
  assert.equal(leaks.length, 1);
  assert.equal(leaks[0].uuid, leaked.uuid);
  assert.equal(leaks[0].isRevoked, true);
  assert.equal(leaks[0].leakUrl, 'https://github.com/someone/repo/blob/main/.env');
  assert.ok(leaks[0].leakReportedAt);
  // The same report again (GitHub retries): the same labels, nothing else changes.
  const again = await signed(t, body);
  assert.equal(again.statusCode, 200);
  assert.equal(again.json()[0].label, 'true_positive');
  const logs = t.logs();
  assert.ok(logs.includes(leaked.uuid), 'the revocation is logged by uuid');
  assert.ok(!logs.includes(leaked.raw), 'the raw key reached the logs');
});

test('forged, tampered and replayed reports, and unknown identifiers, are 401 and revoke nothing', async () => {
  const key = await newKey(t, browser, 'target');
  const body = report([key.raw]);
  const forger = newSigner(current.identifier);
  const forged = await signed(t, body, forger);
  assert.equal(forged.statusCode, 401, 'signed by another key under the same identifier');
  assert.deepEqual(forged.json(), { message: 'Signature does not match the body' });

  const tampered = await post(t, body.replace('content', 'commit'), {
    'github-public-key-identifier': current.identifier,
    'github-public-key-signature': sign(current, body),
  });
  assert.equal(tampered.statusCode, 401, 'a body changed after signing');

  const otherBody = report([generateApiKey().raw]);
  const replayed = await signed(t, body, current, otherBody);
  assert.equal(replayed.statusCode, 401, "another report's signature");

  const stranger = newSigner('unknown-identifier');
  const unknown = await signed(t, body, stranger);
  assert.equal(unknown.statusCode, 401);
  assert.deepEqual(unknown.json(), { message: 'Unknown public key identifier' });

  const notBase64 = await post(t, body, {
    'github-public-key-identifier': current.identifier,
    'github-public-key-signature': '%%%not base64%%%',
  });
  assert.equal(notBase64.statusCode, 401);

  for (const res of [forged, tampered, replayed, unknown, notBase64])
    assert.match(res.headers['content-type'] as string, /^application\/json/);
  assert.ok(await works(t, key.raw), 'nothing was revoked');
});

test('missing headers are 400, a body over 1 MB is 413, a signed body that is not a report is 400', async () => {
  const key = await newKey(t, await devSignIn(t, 'untouched'), 'untouched');
  const body = report([key.raw]);
  const noSignature = await post(t, body, { 'github-public-key-identifier': current.identifier });
  assert.equal(noSignature.statusCode, 400);
  assert.deepEqual(noSignature.json().errors[0].loc, ['header', 'github-public-key-signature']);
  const noIdentifier = await post(t, body, { 'github-public-key-signature': sign(current, body) });
  assert.equal(noIdentifier.statusCode, 400);
  const huge = JSON.stringify([{ token: key.raw, type: 'cds_api_key', url: 'x'.repeat(1024 * 1024), source: 'x' }]);
  const tooLarge = await signed(t, huge);
  assert.equal(tooLarge.statusCode, 413);
  assert.match(tooLarge.headers['content-type'] as string, /^application\/json/);
  const get = await t.app.inject({ method: 'GET', url: '/api/secret-scanning/' });
  assert.equal(get.statusCode, 405);
  assert.equal(get.headers.allow, 'POST');
  for (const text of ['not json', '{"token":"x"}', '[{"token":1}]']) {
    const res = await signed(t, text);
    assert.equal(res.statusCode, 400, text);
  }
  assert.ok(await works(t, key.raw), 'nothing was revoked');
});

test('a report nested 30,000 deep is 400 before its signature is checked; at the bound it is verified and read', async () => {
  const key = await newKey(t, await devSignIn(t, 'nested'), 'nested');
  // A real report with one more item, 30,000 arrays deep.
  const deep = `${report([key.raw]).slice(0, -1)},${arrays(30_000)}]`;
  const tooDeep = {
    message: 'Invalid request',
    errors: [{ loc: ['body'], msg: `is nested deeper than ${MAX_JSON_DEPTH} levels` }],
  };
  for (const res of [await signed(t, deep), await post(t, deep, {})]) {
    assert.equal(res.statusCode, 400);
    assert.deepEqual(res.json(), tooDeep);
  }
  // At the bound (the report, an item, its token's arrays): the signature is checked on the raw bytes, and the item
  // refused by the reader as any malformed one.
  const atBound = `[{"token":${arrays(MAX_JSON_DEPTH - 2)},"type":"cds_api_key"}]`;
  assert.equal((await signed(t, atBound, current, `${atBound} `)).statusCode, 401);
  const malformed = await signed(t, atBound);
  assert.equal(malformed.statusCode, 400);
  assert.deepEqual(malformed.json().errors, [{ loc: ['body', 0], msg: 'must have string token and type' }]);
  assert.ok(await works(t, key.raw), 'nothing was revoked');
  assert.doesNotMatch(t.logs(), /"level":(50|60)/);
});

test("an unknown identifier fetches GitHub's keys again, at most once a minute", async () => {
  const before = github.requests;
  const rotated = newSigner('next-key');
  const key = await newKey(t, await devSignIn(t, 'rotation-watcher'), 'after rotation');
  const body = report([key.raw]);
  // GitHub starts signing with a new key: asked once, and that answer is kept for a minute.
  github.published.push(rotated);
  now += 61_000;
  assert.equal((await signed(t, body, newSigner('made-up-1'))).statusCode, 401);
  assert.equal(github.requests, before + 1);
  for (let i = 0; i < 5; i++) assert.equal((await signed(t, body, newSigner(`made-up-${i + 2}`))).statusCode, 401);
  assert.equal(github.requests, before + 1, 'no request within the minute');
  // Known since that fetch: accepted without asking again.
  const accepted = await signed(t, body, rotated);
  assert.equal(accepted.statusCode, 200, accepted.body);
  assert.equal(github.requests, before + 1);
  assert.equal(await works(t, key.raw), false);
  now += 61_000;
  assert.equal((await signed(t, body, newSigner('made-up-later'))).statusCode, 401);
  assert.equal(github.requests, before + 2, 'asked again after a minute');
});

test('with Redis, a report received by one instance revokes the key on the other at once', async () => {
  let redis: PrivateRedis | undefined;
  const instances: TestApp[] = [];
  try {
    redis = await startPrivateRedis();
    const env = { ...ENV, GITHUB_API_URL: github.url, REDIS_URL: redis.url, REDIS_PREFIX: 'scanning-test:' };
    await addInstancesOnRedis(instances, 2, () =>
      buildTestApp({ env, sharedDatabase: t.database, clock, timers: tickingTimers() }),
    );
    const [one, two] = instances as [TestApp, TestApp];
    const user = await devSignIn(one, 'leaker-two');
    const key = await newKey(one, user, 'everywhere');
    assert.ok(await works(one, key.raw));
    assert.ok(await works(two, key.raw), 'remembered as valid by the second instance');
    const res = await signed(one, report([key.raw]));
    assert.equal(res.json()[0].label, 'true_positive');
    assert.equal(await works(two, key.raw), false, 'refused by the other instance on the next request');
    assert.equal(await works(one, key.raw), false);
  } finally {
    for (const instance of instances) await instance.close();
    await redis?.stop();
  }
});

test('GitHub unreachable: a report that cannot be checked yet is 503 with Retry-After, and revokes nothing', async () => {
  const unreachable = await buildTestApp({
    env: { ...ENV, GITHUB_API_URL: `http://127.0.0.1:${await freePort()}` },
    sharedDatabase: t.database,
    clock,
  });
  try {
    const key = await newKey(t, await devSignIn(t, 'unreachable'), 'kept');
    const res = await signed(unreachable, report([key.raw]));
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['retry-after'], '60');
    assert.match(res.headers['content-type'] as string, /^application\/json/);
    assert.ok(await works(t, key.raw), 'nothing was revoked');
  } finally {
    await unreachable.close();
  }
});
