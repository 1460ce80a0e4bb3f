// /mcp (issue 27): the Model Context Protocol over Streamable HTTP, driven by the official client
// (@modelcontextprotocol/sdk) against a listening server on the bundled data, keyed and limited like the REST API.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, McpError } from '@modelcontextprotocol/sdk/types.js';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { event, utcDate } from './factories-community.ts';
import { chapter } from './factories.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';

const KEYED = { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required' };
// The limit's one-second windows on the test's own clock: a burst falls in one window whatever the machine's speed.
let now = Date.now();
const clock = () => now;
const freshSecond = () => void (now = (Math.floor(now / 1000) + 1) * 1000 + 5);

let t: TestApp;
let limited: TestApp;
let key: string;
let limitedKey: string;
let url: string;
let limitedUrl: string;

async function createKey(app: TestApp, login: string): Promise<string> {
  const browser = await devSignIn(app, login);
  const created = await graphql(app, browser, DOC.createApiKey, { name: 'mcp', expiresAt: inDays(3) });
  return created.json().data.createApiKey.rawKey as string;
}

async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}/mcp`;
}

before(async () => {
  t = await buildTestApp({ env: KEYED, importBundled: true });
  // An event a month from now in Vienna: "upcoming events near Vienna" has an answer whatever the date.
  await event(t.database.db, {
    key: 'vienna-meetup-next-month',
    name: 'OWASP Vienna meetup',
    start_date: utcDate(30),
    end_date: utcDate(30),
    latitude: 48.2082,
    longitude: 16.3738,
  });
  key = await createKey(t, 'agent');
  url = await listen(t);
  // Counted in this process even on the pass with Redis: there a window's count expires after 2 s of real time, which
  // the test's fixed clock cannot hold back, and 1,000 calls take longer. (The shared counts are the REST limiter's own,
  // tested with Redis by rate-limit-cache.test.ts and multi-instance.test.ts.)
  limited = await buildTestApp({
    env: { ...KEYED, RATE_LIMIT_PER_SECOND: '10', REDIS_URL: '' },
    sharedDatabase: t.database,
    clock,
  });
  limitedKey = await createKey(limited, 'limited-agent');
  limitedUrl = await listen(limited);
});
after(async () => {
  await limited.close();
  await t.close();
});

async function connect(target = url, apiKey: string | null = key): Promise<Client> {
  const client = new Client({ name: 'cds-test', version: '1.0.0' });
  const headers: Record<string, string> = apiKey === null ? {} : { 'x-api-key': apiKey };
  await client.connect(new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } }));
  return client;
}

type Result = {
  structuredContent?: Record<string, unknown>;
  content: { type: string; text: string }[];
  isError?: boolean;
};

/** A tool's answer, which must be a success: its structured content, the same as its text, at most 4 kB. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as Result;
  assert.ok(!result.isError, `${name} ${JSON.stringify(args)}: ${result.content[0]?.text}`);
  const structured = result.structuredContent!;
  assert.deepEqual(JSON.parse(result.content[0]!.text), structured);
  assert.ok(result.content[0]!.text.length <= 4096, `${name} answered ${result.content[0]!.text.length} bytes`);
  return structured as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A tool's answer, which must be a tool error (never a protocol error): its message. */
async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as Result;
  assert.equal(result.isError, true, `${name} ${JSON.stringify(args)} succeeded`);
  assert.equal(result.structuredContent, undefined);
  return result.content[0]!.text;
}

const rest = async (path: string) => {
  const res = await t.app.inject({ method: 'GET', url: path, headers: { 'x-api-key': key } });
  assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
  return res.json();
};

/** A JSON-RPC answer as read from a raw POST. */
interface Rpc {
  result: Record<string, unknown>;
  error: { code: number; message: string };
}

/** A raw POST of one body to the listening server. */
const post = (body: string, headers: Record<string, string> = {}, target = url) =>
  fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
const rpc = (method: string, params?: unknown, id: number | null = 1) =>
  JSON.stringify({ jsonrpc: '2.0', ...(id === null ? {} : { id }), method, ...(params ? { params } : {}) });

test('initialize negotiates the protocol; tools/list gives exactly the seven read-only tools', async () => {
  const client = await connect();
  try {
    assert.equal(client.getServerVersion()?.name, 'owasp-community-data');
    assert.deepEqual(client.getServerCapabilities(), { tools: { listChanged: false } });
    assert.match(client.getInstructions() ?? '', /search/);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), [
      'changes',
      'contribute',
      'count',
      'get',
      'list',
      'nearest',
      'search',
    ]);
    for (const tool of tools) {
      assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
      assert.equal(tool.annotations?.openWorldHint, false, tool.name);
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.inputSchema.additionalProperties, false, tool.name);
      assert.ok((tool.description ?? '').length > 100, tool.name);
      for (const name of Object.keys(tool.inputSchema.properties ?? {})) assert.match(name, /^[a-z]+(_[a-z]+)*$/);
    }
  } finally {
    await client.close();
  }
  for (const [asked, answered] of [
    [LATEST_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION],
    ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-03-26'],
    ['1999-01-01', LATEST_PROTOCOL_VERSION],
  ]) {
    const res = await post(
      rpc('initialize', { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'x', version: '1' } }),
      {
        'x-api-key': key,
      },
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('mcp-session-id'), null);
    assert.equal(((await res.json()) as Rpc).result.protocolVersion, answered);
  }
});

test('without a valid key: 401 with the REST API body, before anything is read', async () => {
  await assert.rejects(
    connect(url, null),
    (error: unknown) => error instanceof StreamableHTTPError && error.code === 401,
  );
  await assert.rejects(
    connect(url, 'cds_not_a_key'),
    (error: unknown) => error instanceof StreamableHTTPError && error.code === 401,
  );
  for (const body of [
    rpc('tools/list'),
    rpc('tools/call', { name: 'get', arguments: { resource: 'chapters', id: 'london' } }),
    '{bad',
  ]) {
    const res = await post(body);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^ApiKey /);
    assert.deepEqual(await res.json(), { detail: "Missing or invalid API key in 'X-API-Key' header" });
  }
});

test('a kept answer is served to a valid key only, and not once the data has changed', async () => {
  await chapter(t.database.db, { key: 'mcp-kept', name: 'OWASP Kept', latitude: 1, longitude: 1 });
  t.app.shared.watcher.set(await bumpDataVersion(t.database.db));
  const client = await connect();
  try {
    const args = { resource: 'chapters', id: 'mcp-kept', fields: ['name'] };
    assert.equal((await call(client, 'get', args)).record.name, 'OWASP Kept');
    // The second call is answered from the kept results: no REST request, not even one the response cache answers.
    const { cache } = t.app.shared;
    const looked = cache.hits + cache.misses;
    assert.equal((await call(client, 'get', args)).record.name, 'OWASP Kept');
    assert.equal(cache.hits + cache.misses, looked);
    for (const apiKey of [undefined, 'cds_not_a_key']) {
      const res = await post(
        rpc('tools/call', { name: 'get', arguments: args }),
        apiKey ? { 'x-api-key': apiKey } : {},
      );
      assert.equal(res.status, 401);
      assert.ok(!(await res.text()).includes('Kept'));
    }
    await t.database.db.updateTable('chapters').set({ name: 'OWASP Renamed' }).where('key', '=', 'mcp-kept').execute();
    t.app.shared.watcher.set(await bumpDataVersion(t.database.db));
    assert.equal((await call(client, 'get', args)).record.name, 'OWASP Renamed');
  } finally {
    await client.close();
  }
});

test('search, list, get, nearest and count: small answers by default, more when asked', async () => {
  const client = await connect();
  try {
    const found = await call(client, 'search', { query: 'juise shop', resource: 'projects', limit: 3 });
    assert.deepEqual(found.items[0], { resource: 'projects', id: 'juice-shop', name: 'OWASP Juice Shop' });

    const page = await call(client, 'list', { resource: 'projects', filters: { level: 'flagship' }, limit: 5 });
    assert.equal(page.items.length, 5);
    assert.deepEqual(Object.keys(page.items[0]), ['key', 'name', 'level', 'type']);
    assert.equal(typeof page.next_cursor, 'string');
    assert.equal(page.current_page, undefined);
    const wide = await call(client, 'list', {
      resource: 'events',
      filters: { category: ['global', 'partner'] },
      fields: ['key', 'url'],
      ordering: 'start_date',
    });
    assert.ok(wide.items.every((item: object) => Object.keys(item).join() === 'key,url'));

    const chapter = await call(client, 'get', { resource: 'chapters', id: 'london' });
    assert.equal(chapter.record.country, 'United Kingdom');
    const picked = await call(client, 'get', { resource: 'projects', id: 'juice-shop', fields: ['name', 'level'] });
    assert.deepEqual(picked.record, { name: 'OWASP Juice Shop', level: 'flagship' });
    const issue = (await rest('/api/v0/search/?q=sesame%20seeds&resource=issues')).items[0];
    const fetched = await call(client, 'get', { resource: 'issues', id: issue.id });
    assert.equal(fetched.record.title, issue.name);

    const near = await call(client, 'nearest', {
      resource: 'chapters',
      latitude: 4.711,
      longitude: -74.0721,
      limit: 2,
    });
    assert.equal(near.items[0].key, 'bogota');
    assert.ok(near.items[0].distance_km <= near.items[1].distance_km);

    const levels = await call(client, 'count', { resource: 'projects', group_by: 'level' });
    assert.equal(levels.group_by, 'level');
    assert.equal(
      levels.groups.reduce((sum: number, group: { count: number }) => sum + group.count, 0),
      levels.count,
    );
  } finally {
    await client.close();
  }
});

test('changes: what changed, oldest first, of one record, of some types, from a time; refusals that say why', async () => {
  const { db } = t.database;
  const since = new Date().toISOString();
  await chapter(db, { key: 'mcp-changing', name: 'OWASP Changing', latitude: 2, longitude: 2 });
  await db.updateTable('chapters').set({ name: 'OWASP Changed' }).where('key', '=', 'mcp-changing').execute();
  await db.deleteFrom('chapters').where('key', '=', 'mcp-changing').execute();
  t.app.shared.watcher.set(await bumpDataVersion(db));
  const client = await connect();
  try {
    const record = await call(client, 'changes', { resource: 'chapters', key: 'mcp-changing' });
    assert.deepEqual(
      record.items.map((c: { type: string }) => c.type),
      ['chapter.created', 'chapter.updated', 'chapter.deleted'],
    );
    assert.equal(record.count, 3);
    assert.deepEqual(record.items[1].changed_fields, ['name']);
    assert.equal(record.items[0].url, '/api/v0/chapters/mcp-changing');
    assert.equal(record.next_after, undefined);
    const paged = await call(client, 'changes', { resource: 'chapters', key: 'mcp-changing', limit: 2 });
    assert.equal(paged.items.length, 2);
    assert.equal(paged.next_after, paged.items[1].id);
    const rest = await call(client, 'changes', {
      resource: 'chapters',
      key: 'mcp-changing',
      after: paged.next_after,
    });
    assert.deepEqual(
      rest.items.map((c: { type: string }) => c.type),
      ['chapter.deleted'],
    );
    const deleted = await call(client, 'changes', { types: ['chapter.deleted'], since });
    assert.ok(deleted.items.length >= 1 && deleted.items.every((c: { type: string }) => c.type === 'chapter.deleted'));
    assert.ok(deleted.items.some((c: { key: string }) => c.key === 'mcp-changing'));
    assert.match(await refused(client, 'changes', { key: 'mcp-changing' }), /resource/);
    assert.match(await refused(client, 'changes', { since: 'last week' }), /since: must match format "date-time"/);
    assert.match(await refused(client, 'changes', { types: ['chapter.renamed'] }), /must be one of: chapter\.created/);
    assert.match(await refused(client, 'changes', { resource: 'snakes' }), /resource must be one of/);
    assert.match(await refused(client, 'changes', { limit: 101 }), /limit must be at most 100/);
  } finally {
    await client.close();
  }
});

test('a missing record, a refused filter, an argument out of range: tool errors that say why', async () => {
  const client = await connect();
  try {
    assert.equal(await refused(client, 'get', { resource: 'chapters', id: 'atlantis' }), 'Chapter not found');
    assert.match(await refused(client, 'get', { resource: 'issues', id: 'OWASP/Nest' }), /3 parts/);
    assert.match(await refused(client, 'get', { resource: 'issues', id: 'a/../b' }), /3 parts/);
    assert.match(await refused(client, 'get', { resource: 'issues', id: 'OWASP/Nest/x' }), /issue_id/);
    assert.match(await refused(client, 'get', { resource: 'chapters', id: 'london', fields: ['nope'] }), /fields/);
    assert.match(await refused(client, 'get', { resource: 'snakes', id: 'x' }), /resource must be one of/);
    assert.match(
      await refused(client, 'list', { resource: 'chapters', filters: { colour: 'red' } }),
      /chapters has no filter "colour" \(its filters: country, /,
    );
    assert.match(
      await refused(client, 'count', { resource: 'labels', group_by: 'organization', filters: { x: 1 } }),
      /no filter/,
    );
    assert.match(await refused(client, 'list', { resource: 'projects', filters: { level: 'legendary' } }), /level/);
    assert.match(await refused(client, 'list', { resource: 'projects', filters: { page: 4 } }), /may not set page/);
    assert.match(await refused(client, 'list', { resource: 'projects', filters: { limit: 100 } }), /may not set limit/);
    assert.match(
      await refused(client, 'list', { resource: 'projects', filters: { fields: 'key' } }),
      /may not set fields/,
    );
    assert.match(await refused(client, 'list', { resource: 'projects', limit: 101 }), /limit must be at most 100/);
    assert.match(await refused(client, 'list', { resource: 'projects', limit: 0 }), /limit must be at least 1/);
    assert.match(await refused(client, 'list', { resource: 'projects', cursor: 'garbage' }), /cursor/);
    assert.match(await refused(client, 'list', { resource: 'projects', page: 2 }), /unknown argument "page"/);
    assert.match(
      await refused(client, 'list', { resource: 'projects', filters: { level: { a: 1 } } }),
      /filters\.level/,
    );
    assert.match(await refused(client, 'search', { query: '' }), /query must not be empty/);
    assert.match(await refused(client, 'search', {}), /query is required/);
    assert.match(
      await refused(client, 'nearest', { resource: 'chapters', place: 'Xyzzyqwv' }),
      /Unknown place "Xyzzyqwv"/,
    );
    assert.match(await refused(client, 'nearest', { resource: 'chapters' }), /place/);
    assert.match(await refused(client, 'nearest', { resource: 'chapters', latitude: 10 }), /longitude/);
    assert.match(await refused(client, 'nearest', { resource: 'chapters', latitude: 91, longitude: 0 }), /at most 90/);
    assert.match(
      await refused(client, 'nearest', { resource: 'chapters', place: 'Paris', upcoming_only: true }),
      /events/,
    );
    assert.match(await refused(client, 'count', { resource: 'projects', group_by: 'country' }), /group_by/);
    await assert.rejects(
      client.callTool({ name: 'delete', arguments: {} }),
      (error: unknown) => error instanceof McpError && error.code === -32602,
    );
  } finally {
    await client.close();
  }
});

test('the transport: JSON-RPC errors, notifications, one message per POST, the body limit, 405', async () => {
  const keyed = { 'x-api-key': key };
  const status = async (res: Response) => ({
    status: res.status,
    body: (res.status === 202 ? null : await res.json()) as Rpc,
  });
  const parse = await status(await post('{"jsonrpc": "2.0", "id": 1, "method": ', keyed));
  assert.deepEqual(parse, {
    status: 400,
    body: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } },
  });
  const batch = await status(await post(`[${rpc('ping')}]`, keyed));
  assert.equal(batch.status, 400);
  assert.equal(batch.body.error.code, -32600);
  assert.equal((await status(await post('{"id": 1, "method": "ping"}', keyed))).body.error.code, -32600);
  assert.deepEqual(await status(await post(rpc('ping', undefined, 7), keyed)), {
    status: 200,
    body: { jsonrpc: '2.0', id: 7, result: {} },
  });
  const unknown = await status(await post(rpc('resources/list'), keyed));
  assert.equal(unknown.status, 200);
  assert.equal(unknown.body.error.code, -32601);
  assert.equal((await status(await post(rpc('initialize', {}), keyed))).body.error.code, -32602);
  const notified = await post(rpc('notifications/initialized', undefined, null), keyed);
  assert.equal(notified.status, 202);
  assert.equal(await notified.text(), '');
  const answer = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, result: {} }), keyed);
  assert.equal(answer.status, 202);
  const version = await status(await post(rpc('ping'), { ...keyed, 'mcp-protocol-version': '2023-01-01' }));
  assert.equal(version.status, 400);
  assert.match(version.body.error.message, /Unsupported MCP-Protocol-Version/);
  assert.equal((await post(rpc('ping'), { ...keyed, 'mcp-protocol-version': '2025-06-18' })).status, 200);
  assert.equal((await post(rpc('ping'), { ...keyed, accept: 'text/html' })).status, 406);
  const large = await post(rpc('tools/call', { name: 'search', arguments: { query: 'x'.repeat(70_000) } }), keyed);
  assert.equal(large.status, 413);
  assert.deepEqual(await large.json(), { message: 'Request body is too large' });
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(url, { method, headers: keyed });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get('allow'), 'POST');
    assert.deepEqual(await res.json(), { message: 'Method not allowed' });
  }
});

test('ten questions an assistant would ask, answered right on the bundled data', async () => {
  const client = await connect();
  const keys = (items: { key: string }[]) => items.map((item) => item.key);
  try {
    // 1. Which chapter is nearest to Amsterdam?
    const amsterdam = await call(client, 'nearest', { resource: 'chapters', place: 'Amsterdam', limit: 1 });
    assert.deepEqual(amsterdam.origin.found, { name: 'Amsterdam', level: 'city', country_code: 'NL' });
    assert.equal(amsterdam.items[0].key, 'netherlands');

    // 2. Which events near Vienna are coming up? The upcoming events of the REST list within 50 km, nearest first.
    const vienna = await call(client, 'nearest', {
      resource: 'events',
      place: 'Vienna',
      upcoming_only: true,
      radius_km: 50,
    });
    const { latitude, longitude } = vienna.origin;
    const upcoming = await rest(
      `/api/v0/events/?is_upcoming=true&near=${latitude},${longitude}&radius_km=50&limit=100`,
    );
    assert.deepEqual(keys(vienna.items), keys(upcoming.items));
    assert.ok(keys(vienna.items).includes('vienna-meetup-next-month'));
    assert.ok(vienna.items.every((item: { distance_km: number }) => item.distance_km <= 50));

    // 3. Is there an OWASP project called Juice Shop, and what level is it?
    const juice = await call(client, 'search', { query: 'juice shop' });
    assert.deepEqual([juice.items[0].resource, juice.items[0].id], ['projects', 'juice-shop']);
    assert.equal((await call(client, 'get', { resource: 'projects', id: 'juice-shop' })).record.level, 'flagship');

    // 4. Who leads the London chapter?
    const london = await call(client, 'get', { resource: 'chapters', id: 'london' });
    assert.deepEqual(london.record.leaders, (await rest('/api/v0/chapters/london')).leaders);
    assert.ok(london.record.leaders.length > 0);

    // 5. How many projects are there at each level? The same as each level's filter counts.
    const levels = await call(client, 'count', { resource: 'projects', group_by: 'level' });
    assert.ok(levels.groups.length >= 4);
    for (const { value, count } of levels.groups)
      assert.equal(count, (await rest(`/api/v0/projects/?level=${value}&limit=1`)).count, `level ${value}`);

    // 6. How many chapters does India have? The group and the filter agree.
    const countries = await call(client, 'count', { resource: 'chapters', group_by: 'country' });
    const india = countries.groups.find((group: { value: string }) => group.value === 'India');
    const indian = await call(client, 'list', { resource: 'chapters', filters: { country: 'IN' }, limit: 1 });
    assert.equal(india.count, indian.count);
    assert.equal(india.count, (await rest('/api/v0/chapters/?country=India&limit=1')).count);

    // 7. Every Turkish chapter, page by page with the cursor.
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(client, 'list', {
        resource: 'chapters',
        filters: { country: 'Turkey' },
        limit: 4,
        ...(cursor ? { cursor } : {}),
      });
      walked.push(...keys(page.items));
      cursor = page.next_cursor;
    } while (cursor);
    const turkish = await rest('/api/v0/chapters/?country=TR&limit=100');
    assert.deepEqual(walked, keys(turkish.items));
    assert.equal(walked.length, turkish.count);

    // 8. Which chapter is nearest to Bogotá's coordinates, and how far?
    const bogota = await call(client, 'nearest', {
      resource: 'chapters',
      latitude: 4.711,
      longitude: -74.0721,
      limit: 1,
    });
    assert.equal(bogota.items[0].key, 'bogota');
    assert.ok(bogota.items[0].distance_km < 25);

    // 9. How many sponsors of each type? They add up to every sponsor.
    const sponsors = await call(client, 'count', { resource: 'sponsors', group_by: 'sponsor_type' });
    assert.equal(sponsors.count, (await rest('/api/v0/sponsors/?limit=1')).count);
    const platinum = sponsors.groups.find((group: { value: string }) => group.value === 'Platinum');
    assert.equal(platinum.count, (await rest('/api/v0/sponsors/?sponsor_type=Platinum&limit=1')).count);

    // 10. How many issues are open, per repository?
    const open = await call(client, 'count', {
      resource: 'issues',
      group_by: 'repository',
      filters: { state: 'open' },
    });
    assert.equal(open.count, (await rest('/api/v0/issues/?state=open&limit=1')).count);
    assert.ok(open.groups.every((group: { value: string }) => /^[^/]+\/[^/]+$/.test(group.value)));
  } finally {
    await client.close();
  }
});

test('the rate limit: every POST counts once, a tool call by its REST request; 1,000 calls in a second meet 429', async () => {
  const client = await connect(limitedUrl, limitedKey);
  try {
    freshSecond();
    // tools/list counts once (the key's budget of 10 a second, shared with its REST calls); then 9 calls are served.
    await client.listTools();
    const calls = await Promise.allSettled(
      Array.from({ length: 1000 }, () =>
        client.callTool({ name: 'get', arguments: { resource: 'chapters', id: 'london' } }),
      ),
    );
    const served = calls.filter((c) => c.status === 'fulfilled');
    const refusedCalls = calls.filter((c) => c.status === 'rejected');
    assert.equal(served.length, 9);
    assert.equal(refusedCalls.length, 991);
    for (const c of refusedCalls) {
      const error = (c as PromiseRejectedResult).reason;
      assert.ok(error instanceof StreamableHTTPError && error.code === 429, String(error));
    }
    const res = await post(
      rpc('tools/call', { name: 'search', arguments: { query: 'london' } }),
      { 'x-api-key': limitedKey },
      limitedUrl,
    );
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '1');
    assert.equal(res.headers.get('ratelimit-remaining'), '0');
    assert.deepEqual(await res.json(), { detail: 'Too many requests.' });
    // The same budget as REST's.
    const restCall = await limited.app.inject({
      method: 'GET',
      url: '/api/v0/chapters/london',
      headers: { 'x-api-key': limitedKey },
    });
    assert.equal(restCall.statusCode, 429);

    freshSecond();
    const again = (await client.callTool({ name: 'get', arguments: { resource: 'chapters', id: 'london' } })) as Result;
    assert.ok(!again.isError);
    // A call refused before it reaches REST counts too.
    freshSecond();
    const refusedArgs = await Promise.all(
      Array.from({ length: 11 }, () =>
        post(
          rpc('tools/call', { name: 'get', arguments: { resource: 'chapters' } }),
          { 'x-api-key': limitedKey },
          limitedUrl,
        ),
      ),
    );
    assert.deepEqual(refusedArgs.map((r) => r.status).sort(), [...Array(10).fill(200), 429]);
  } finally {
    await client.close();
  }
});

test('a kept call is answered before routing: the body and headers the route gives, counted once; the rest reaches the route whole', async () => {
  const base = new URL(limitedUrl).origin;
  const early = async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    return Number(/^cds_mcp_early_answers_total (\d+)$/m.exec(text)?.[1]);
  };
  const body = rpc(
    'tools/call',
    { name: 'get', arguments: { resource: 'chapters', id: 'london', fields: ['name'] } },
    7,
  );
  const send = (headers: Record<string, string> = {}, payload: string | ReadableStream = body) =>
    fetch(limitedUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': limitedKey, ...headers },
      body: payload,
      duplex: 'half',
    } as RequestInit);
  // A body sent in chunks (no Content-Length) is never taken early: the route's answer, from the kept results.
  const chunked = () =>
    send(
      {},
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(body));
          controller.close();
        },
      }),
    );
  const own = new Set(['x-request-id', 'date', 'ratelimit-remaining', 'ratelimit', 'keep-alive', 'connection']);
  const comparable = (res: Response) => [...res.headers].filter(([name]) => !own.has(name));

  freshSecond();
  const first = await send();
  assert.equal(first.status, 200);
  const firstText = await first.text();
  const before = await early();
  const fast = await send();
  assert.equal(await early(), before + 1, 'answered early');
  const routed = await chunked();
  assert.equal(await early(), before + 1, 'a chunked body goes to the route');
  assert.equal(await fast.text(), firstText);
  assert.equal(await routed.text(), firstText);
  assert.deepEqual(comparable(fast), comparable(routed));
  // Each counted once, in order: 10 a second, three used.
  assert.deepEqual(
    [first, fast, routed].map((r) => r.headers.get('ratelimit-remaining')),
    ['9', '8', '7'],
  );
  assert.match(fast.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  assert.notEqual(fast.headers.get('x-request-id'), routed.headers.get('x-request-id'));

  // Raw HTTP/1.1 on a socket of its own: what `write` sends on it, and all that comes back until it closes.
  const { hostname, port } = new URL(limitedUrl);
  const exchange = (write: (socket: net.Socket) => void) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname);
      const received: Buffer[] = [];
      socket.on('data', (chunk) => received.push(chunk));
      socket.on('close', () => resolve(Buffer.concat(received).toString('utf8')));
      socket.on('error', reject);
      write(socket);
    });
  const head = (length: number, last: boolean) =>
    `POST /mcp HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nAccept: application/json\r\n` +
    `X-API-Key: ${limitedKey}\r\nContent-Length: ${length}\r\n${last ? 'Connection: close\r\n' : ''}\r\n`;

  // A body with its Content-Length that arrives in two parts (the second after a round trip of another request) is
  // answered early once it is whole.
  const bytes = Buffer.from(body);
  const split = await exchange((socket) => {
    socket.write(head(bytes.length, true));
    socket.write(
      bytes.subarray(0, 20),
      () =>
        void early().then(
          () => socket.write(bytes.subarray(20)),
          (error: Error) => socket.destroy(error),
        ),
    );
  });
  assert.match(split, /^HTTP\/1\.1 200 /);
  assert.equal(split.slice(split.indexOf('\r\n\r\n') + 4), firstText);
  assert.equal(await early(), before + 2, 'a body in parts, answered early once whole');

  // A client gone halfway through its body gets nothing and takes nothing down; two calls sent at once on one
  // connection (pipelined, the second's headers in the first's body's packet) are each answered early, in order.
  const message = (id: number, last: boolean) => {
    const text = body.replace('"id":7', `"id":${id}`);
    return head(Buffer.byteLength(text), last) + text;
  };
  const half = message(9, true);
  assert.equal(await exchange((socket) => socket.write(half.slice(0, half.length - 10), () => socket.destroy())), '');
  freshSecond();
  const both = await exchange((socket) => socket.write(message(11, false) + message(12, true)));
  const answers = both.split(/HTTP\/1\.1 /).slice(1);
  assert.deepEqual(
    answers.map((a) => [a.slice(0, 3), a.slice(a.indexOf('\r\n\r\n') + 4)]),
    [11, 12].map((id) => ['200', firstText.replace('"id":7', `"id":${id}`)]),
  );
  assert.equal(await early(), before + 4, 'both answered early');

  // What the early path reads and leaves goes to the route with its body whole.
  freshSecond();
  const listed = (await (await send({}, rpc('tools/list'))).json()) as Rpc;
  assert.ok(Array.isArray(listed.result.tools));
  assert.equal((await send({}, rpc('notifications/initialized', undefined, null))).status, 202);
  const broken = await send({}, '{"jsonrpc":');
  assert.equal(broken.status, 400);
  assert.equal(((await broken.json()) as Rpc).error.code, -32700);
  const other = (await (
    await send({}, rpc('tools/call', { name: 'get', arguments: { resource: 'chapters', id: 'london' } }, 8))
  ).json()) as Rpc;
  assert.ok(other.result.structuredContent);
  const before2 = await early();
  // An Origin is the route's to judge (with CORS_ORIGINS=* any page may call); a wrong key is 401, never the answer.
  assert.equal((await send({ origin: 'https://example.org' })).status, 200);
  const wrong = await send({ 'x-api-key': 'cds_not_a_key' });
  assert.equal(wrong.status, 401);
  assert.ok(!(await wrong.text()).includes('London'));
  assert.equal(await early(), before2);
});

test('a kept call answered early carries the id it was sent with, of any kind, also once its text is known', async () => {
  const base = new URL(url).origin;
  const early = async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    return Number(/^cds_mcp_early_answers_total (\d+)$/m.exec(text)?.[1]);
  };
  const keyed = { 'x-api-key': key };
  const args = { resource: 'chapters', id: 'london', fields: ['name', 'country'] };
  // The official client's order: the arguments' own "id" comes before the message's.
  const body = (id: string) =>
    `{"method":"tools/call","params":{"name":"get","arguments":${JSON.stringify(args)}},"jsonrpc":"2.0","id":${id}}`;
  const first = await (await post(body('1'), keyed)).text();
  const result = first.slice(first.indexOf(',"result":'));
  assert.match(result, /OWASP London/);
  const answered = async (text: string, id: unknown) => {
    const res = await post(text, keyed);
    assert.equal(res.status, 200, text);
    assert.equal(await res.text(), `{"jsonrpc":"2.0","id":${JSON.stringify(id)}${result}`, text);
  };
  const before = await early();
  const ids: [string, unknown][] = [
    ['2', 2],
    ['0', 0],
    ['-17', -17],
    ['9007199254740991', 9007199254740991],
    ['"2"', '2'],
    ['""', ''],
    ['"é ☃ 😀 \u2028 <tag> & \'quoted\' {\\"id\\":3}"', 'é ☃ 😀 \u2028 <tag> & \'quoted\' {"id":3}'],
    ['"' + 'x'.repeat(200) + '"', 'x'.repeat(200)],
    // Not plain tokens: read in full, answered the same.
    ['-0', 0],
    ['1e0', 1],
    ['"tab\\t"', 'tab\t'],
    ['"\\u00e9"', 'é'],
  ];
  for (const [text, id] of ids) await answered(body(text), id);
  assert.equal(await early(), before + ids.length, 'each answered early');

  // Ids the route refuses are refused, whatever text came before: never the kept answer.
  for (const id of ['null', '1.5', '9007199254740992', '"' + 'x'.repeat(201) + '"', 'true', '{"a":1}', '[1]']) {
    const res = await post(body(id), keyed);
    assert.equal(res.status, 400, id);
    const answer = (await res.json()) as Rpc & { id: unknown };
    assert.equal(answer.error.code, -32600, id);
    assert.equal(answer.id, null);
  }
  // A message with two ids is the last one's (JSON.parse's rule), its first one changed or not.
  const twice = (id: string) => body(id).replace('"jsonrpc":"2.0"', '"id":"first","jsonrpc":"2.0"');
  await answered(twice('"last"'), 'last');
  await answered(twice('"last"').replace('"first"', '"other"'), 'last');
  await answered(twice('3').replace('"first"', '4'), 3);
  // The same text around another record's id is that record's call, never the kept answer of the first.
  await answered(body('5'), 5);
  await answered(body('5'), 5);
  const other = await (await post(body('5').replace('"london"', '"mcp-kept"'), keyed)).json();
  assert.equal((other as { id: number }).id, 5);
  assert.doesNotMatch(JSON.stringify(other), /OWASP London/);
  // The same text with blanks around its id, or its id's place moved: the same answers.
  await answered(body(' 6 ').replace('"id": 6 ', '"id" :  6\n'), 6);
  await answered(body('7').replace(/,"jsonrpc":"2.0","id":7}$/, ',"id":7,"jsonrpc":"2.0"}'), 7);
  // Without a valid key, a known text is 401 and nothing of the answer.
  const refused = await post(body('8'), { 'x-api-key': 'cds_not_a_key' });
  assert.equal(refused.status, 401);
  assert.doesNotMatch(await refused.text(), /London/);
});
