// What /graphql/ refuses before any resolver runs (issue 25): a body over its own limit (413 with the REST API's body,
// not a 200 "Internal server error"), a document over the parser's token limit, and a client address over the
// per-address rate limit (429 as REST answers), while another address is still served.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, type TestApp } from './app.ts';
import { GRAPHQL_BODY_LIMIT, GRAPHQL_MAX_TOKENS } from '../src/graphql/index.ts';

let now = Date.UTC(2026, 0, 1);
const clock = () => now;
/** The next one-second window of the rate limit. */
const freshSecond = () => void (now = (Math.floor(now / 1000) + 1) * 1000 + 5);

let t: TestApp;
before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_PER_SECOND: '5', LOG_LEVEL: 'info' }, clock, captureLogs: true });
});
after(() => t.close());

const ask = (payload: string, remoteAddress = '127.0.0.1', url = '/graphql/') =>
  t.app.inject({ method: 'POST', url, remoteAddress, headers: { 'content-type': 'application/json' }, payload });

test('a body over the limit of /graphql/ is 413 with our body, logged as no error, and nothing is run', async () => {
  for (const url of ['/graphql/', '/graphql']) {
    freshSecond();
    const padding = 'x'.repeat(GRAPHQL_BODY_LIMIT);
    const res = await ask(JSON.stringify({ query: '{ me { login } }', variables: { padding } }), '127.0.0.1', url);
    assert.equal(res.statusCode, 413, url);
    assert.deepEqual(res.json(), { message: 'Request body is too large' });
  }
  assert.doesNotMatch(t.logs(), /"level":50/, 'no error-level log line');
  // Just under the limit, the same document is served.
  freshSecond();
  const fits = 'x'.repeat(GRAPHQL_BODY_LIMIT - 100);
  const res = await ask(JSON.stringify({ query: '{ me { login } }', variables: { padding: fits } }));
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { data: { me: null } });
});

test('a document over the token limit is refused while parsing: 400, a GraphQL error', async () => {
  freshSecond();
  const fields = Array.from({ length: GRAPHQL_MAX_TOKENS }, () => 'login').join(' ');
  const res = await ask(JSON.stringify({ query: `{ me { ${fields} } }` }));
  assert.equal(res.statusCode, 400);
  assert.match(res.json().errors[0].message, new RegExp(`more th(?:an|at) ${GRAPHQL_MAX_TOKENS} tokens`));
});

test('an invalid document is answered the same way each time it is sent (refused before any cache)', async () => {
  freshSecond();
  const first = await ask(JSON.stringify({ query: '{ me { login nope } }' }));
  const second = await ask(JSON.stringify({ query: '{ me { login nope } }' }));
  assert.equal(first.statusCode, 400);
  assert.deepEqual(second.json(), first.json());
  assert.match(first.json().errors[0].message, /Cannot query field "nope"/);
});

test('an address over the rate limit gets 429 with Retry-After; another address is still served', async () => {
  freshSecond();
  const query = JSON.stringify({ query: '{ me { login } }' });
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await ask(query, '198.51.100.7')).statusCode);
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
  const refused = await ask(query, '198.51.100.7');
  assert.deepEqual(refused.json(), { detail: 'Too many requests.' });
  assert.equal(refused.headers['retry-after'], '1');
  assert.equal(refused.headers['ratelimit-remaining'], '0');
  // An oversized body from the limited address is refused by the limit before it is read.
  assert.equal((await ask('x'.repeat(GRAPHQL_BODY_LIMIT * 2), '198.51.100.7')).statusCode, 429);
  assert.equal((await ask(query, '198.51.100.8')).statusCode, 200, 'another address');
  // The REST API's anonymous budget of that address is its own.
  const rest = await t.app.inject({ method: 'GET', url: '/api/v0/chapters/', remoteAddress: '198.51.100.7' });
  assert.equal(rest.statusCode, 200);
  freshSecond();
  assert.equal((await ask(query, '198.51.100.7')).statusCode, 200, 'served again in the next second');
});
