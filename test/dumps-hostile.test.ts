// Test tier: system (starts the server as a process): `npm run test:system`, CI.
// `cds import --from-dumps` against a hostile source (issue 41, item 3): a stand-in on 127.0.0.1 serves a manifest
// and small valid files (one organization, written first, so that "nothing written" means a rollback), and one file,
// `members`, is made hostile; a second listener, on another port, plays another host and records every request.
// The key never reaches it; a line too long, a body past the manifest's size, a source that drips or says nothing:
// each ends the import at once with an error that says so, exit 1, the database unchanged.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { REQUIRED_EXTRAS, ROW_DUMPS } from '../src/data/import/dumps/dump-rows.queries.ts';
import { createTestDb, seedDataDir, serverUrl, type TestDatabase } from './helpers.ts';
import { exited, freePort, runCli, startServer } from './process.ts';

const KEY = `cds_${'k'.repeat(43)}hostile`;
const RESOURCES = [...ROW_DUMPS, 'snapshot-releases'];
const ORGANIZATION = JSON.stringify({
  params: { organization_id: 'acme' },
  record: {
    login: 'acme',
    name: 'Acme',
    company: '',
    location: '',
    created_at: '2020-01-01T00:00:00Z',
    updated_at: '2020-01-01T00:00:00Z',
  },
  extra: { description: '' },
});

type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

interface Listener {
  base: string;
  requests: { url: string; key: string | undefined }[];
  /** The answer to `/api/v0/dumps/members.ndjson.gz` (the stand-in only); undefined: the file as it is. */
  members?: Handler | undefined;
  /** Changes to the manifest's item of `members`. */
  membersItem?: Record<string, unknown> | undefined;
  /** The manifest as dumps of format 1 wrote it: no `format`, no `extra_fields`. */
  formatOne?: boolean;
  /** The `extra_fields` of some items instead of those the import reads (a source of an earlier format 2). */
  extraFields?: Record<string, string[]> | undefined;
  /** The lines of some files instead of the usual ones (none but the organization's). */
  lines?: Record<string, string[]> | undefined;
  close(): Promise<void>;
}

/** A file of the stand-in: gzip of its lines, with what the manifest says of it. */
function dumpFile(lines: string[]): { body: Buffer; records: number; bytes: number; sha256: string } {
  const body = zlib.gzipSync(lines.map((line) => `${line}\n`).join(''));
  return { body, records: lines.length, bytes: body.length, sha256: createHash('sha256').update(body).digest('hex') };
}

const files = new Map(
  RESOURCES.map((resource) => [resource, dumpFile(resource === 'organizations' ? [ORGANIZATION] : [])]),
);
const members = files.get('members')!;
const fileOf = (self: Listener, resource: string) => {
  const lines = self.lines?.[resource];
  return lines ? dumpFile(lines) : files.get(resource);
};

async function listen(handler: (listener: Listener) => Handler): Promise<Listener> {
  const listener = { requests: [] } as unknown as Listener;
  const serve = handler(listener);
  const server = http.createServer((request, response) => {
    listener.requests.push({ url: request.url ?? '', key: request.headers['x-api-key'] as string | undefined });
    serve(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  listener.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  listener.close = () => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return listener;
}

/** The stand-in source: the manifest and the files of RESOURCES, with the key; `members` as the test makes it. */
const standIn =
  (self: Listener): Handler =>
  (request, response) => {
    if (request.headers['x-api-key'] !== KEY) return void response.writeHead(401).end('{}');
    if (request.url === '/api/v0/dumps/') {
      const items = RESOURCES.map((resource) => {
        const { records, bytes, sha256 } = fileOf(self, resource)!;
        const item = { resource, url: `/api/v0/dumps/${resource}.ndjson.gz`, records, bytes, sha256 };
        return {
          ...item,
          ...(self.formatOne ? {} : { extra_fields: self.extraFields?.[resource] ?? REQUIRED_EXTRAS[resource] ?? [] }),
          data_version: 1,
          created_at: '2026-01-01T00:00:00Z',
          ...(resource === 'members' ? self.membersItem : {}),
        };
      });
      const manifest = self.formatOne ? { items } : { status: 'ready', format: 2, items };
      return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(manifest));
    }
    // (any path ending so: a redirect's target too)
    if (self.members && request.url?.endsWith('/members.ndjson.gz')) return self.members(request, response);
    const resource = /^\/api\/v0\/dumps\/([a-z-]+)\.ndjson\.gz$/.exec(request.url ?? '')?.[1];
    const file = resource === undefined ? undefined : fileOf(self, resource);
    if (!file) return void response.writeHead(404).end('{}');
    response.writeHead(200, { 'content-type': 'application/gzip' }).end(file.body);
  };

let source: Listener;
let elsewhere: Listener;
let database: TestDatabase | undefined;
let server: ReturnType<typeof startServer> | undefined;
let tmp: string;
let env: Record<string, string>;
before(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-hostile-'));
  env = { DATA_DIR: path.join(tmp, 'data'), CDS_SOURCE_API_KEY: KEY };
  if (serverUrl) {
    database = await createTestDb();
    env.DATABASE_URL = database.url!;
  } else {
    // A server holds the embedded database: each `cds` below runs in it (the admin channel), without a database
    // open of its own (about 2 s each); the import so also takes the CLI's CDS_SOURCE_* settings through the channel.
    await seedDataDir(env.DATA_DIR!);
    server = startServer({ ...env, PORT: String(await freePort()), AUTO_IMPORT: 'false' });
    const ready = await runCli(['--wait-for-server', 'status'], env);
    assert.equal(ready.code, 0, ready.stderr);
  }
  [source, elsewhere] = await Promise.all([
    listen(standIn),
    listen(() => (_request, response) => void response.writeHead(404).end('{}')),
  ]);
});
after(async () => {
  server?.kill('SIGTERM');
  await Promise.all([source?.close(), elsewhere?.close(), database?.drop(), server && exited(server)]);
  await fs.rm(tmp, { recursive: true, force: true });
});

/** The import, its time, and what it printed checked for the key; undefined handler: the file as it is. */
async function importWith(
  members: Handler | undefined,
  membersItem?: Record<string, unknown>,
  extra: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string; ms: number }> {
  Object.assign(source, { members, membersItem });
  const started = performance.now();
  const result = await runCli(['import', '--from-dumps', source.base, '--json'], { ...env, ...extra });
  const ms = performance.now() - started;
  assert.ok(!`${result.stdout}${result.stderr}`.includes(KEY), 'the key is never printed');
  return { ...result, ms };
}

async function assertNothingWritten(): Promise<void> {
  const status = await runCli(['status', '--json'], env);
  assert.equal(status.code, 0, status.stderr);
  const stored = (JSON.parse(status.stdout) as { resource: string; stored: number }[]).filter((row) => row.stored > 0);
  assert.deepEqual(stored, [], 'the database holds no records');
}

test('a manifest naming a file on another origin: refused before any request there, nothing written', async () => {
  const result = await importWith(undefined, { url: `${elsewhere.base}/api/v0/dumps/members.ndjson.gz` });
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /puts the file of members on another origin \(http:\/\/127\.0\.0\.1:\d+\)/);
  assert.deepEqual(elsewhere.requests, [], 'the other host got no request');
  assert.ok(!source.requests.some((request) => request.url.includes('organizations')), 'no file was read');
  await assertNothingWritten();
});

test('a redirect (301, 302, 307) to another origin: not followed, the key never sent there, nothing written', async () => {
  for (const status of [301, 302, 307]) {
    const result = await importWith((_request, response) => {
      response.writeHead(status, { location: `${elsewhere.base}/api/v0/dumps/members.ndjson.gz` }).end();
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`redirects \\(HTTP ${status}\\) to another origin`));
  }
  assert.deepEqual(elsewhere.requests, [], 'the other host got no request');
  await assertNothingWritten();
});

test(
  'a line longer than the bound (a small gzip of a huge line): ends at once, nothing written',
  { timeout: 30_000 },
  async () => {
    // 64 MiB of 'a', 64 kB compressed: before the bound, joining its chunks took minutes.
    const huge = zlib.gzipSync(Buffer.alloc(64 * 2 ** 20, 'a'), { level: 1 });
    const sha256 = createHash('sha256').update(huge).digest('hex');
    const result = await importWith((_request, response) => void response.writeHead(200).end(huge), {
      records: 1,
      bytes: huge.length,
      sha256,
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /members\.ndjson\.gz: a line longer than 8 MiB: not a record/);
    await assertNothingWritten();
  },
);

test('a body longer than the manifest says: not read past it, nothing written', { timeout: 30_000 }, async () => {
  let sent = 0;
  const result = await importWith((_request, response) => {
    // The file, then zeros without end (until the reader stops: at most 64 MiB).
    response.writeHead(200);
    response.write(members.body);
    const more = () => {
      while (sent < 64 * 2 ** 20 && !response.destroyed) {
        sent += 2 ** 16;
        if (!response.write(Buffer.alloc(2 ** 16))) return void response.once('drain', more);
      }
      response.end();
    };
    more();
  });
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    new RegExp(`members\\.ndjson\\.gz: more than the ${members.bytes} bytes the manifest says`),
  );
  assert.ok(sent < 16 * 2 ** 20, `the reader stopped early (${sent} bytes sent past the file)`);
  await assertNothingWritten();
});

test(
  'a source that drips, or answers nothing: ends within its window, nothing written',
  { timeout: 30_000 },
  async () => {
    const pace = { CDS_SOURCE_TIMEOUT_MS: '300', CDS_SOURCE_MIN_KBPS: '1' };
    const timers: NodeJS.Timeout[] = [];
    const drip = await importWith(
      (_request, response) => {
        // One byte every 20 ms: 15 bytes a window, where the floor asks for 300.
        response.writeHead(200);
        let at = 0;
        const next = () => {
          if (response.destroyed || at >= members.body.length) return void response.end();
          response.write(members.body.subarray(at, ++at));
          timers.push(setTimeout(next, 20));
        };
        next();
      },
      undefined,
      pace,
    );
    assert.equal(drip.code, 1, drip.stderr);
    assert.match(drip.stderr, /members\.ndjson\.gz: the source sent \d+ bytes in 0\.3 s, below the floor of 1 kB\/s/);
    const silent = await importWith(() => {}, undefined, pace);
    assert.equal(silent.code, 1, silent.stderr);
    assert.match(silent.stderr, /members\.ndjson\.gz: the source sent nothing for 0\.3 s \(CDS_SOURCE_TIMEOUT_MS\)/);
    timers.forEach(clearTimeout);
    // One window (0.3 s) and a second at most for the open, the small files and the rollback.
    for (const { ms } of [drip, silent]) assert.ok(ms < 5_000, `ended after ${Math.round(ms)} ms`);
    await assertNothingWritten();
  },
);

test('dumps without the stored fields filters read (format 1): refused, naming them, nothing written', async () => {
  source.formatOne = true;
  const before = source.requests.length;
  try {
    const result = await importWith(undefined);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /lack stored fields that filters, the search or orderings read \(organizations: description; repositories: language, is_archived, is_fork;.*events: category.*\).*older version \(dumps format 1\)/,
    );
    assert.ok(!source.requests.slice(before).some((r) => r.url.endsWith('.ndjson.gz')), 'no file was asked for');
  } finally {
    source.formatOne = false;
  }
  await assertNothingWritten();
});

test('dumps of format 2 whose issues carry their comment count only: refused, naming labels and assignees', async () => {
  source.extraFields = { issues: ['comments_count'] };
  try {
    const result = await importWith(undefined);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /lack stored fields that filters, the search or orderings read \(issues: labels, assignees\).*\(dumps format 2\)/,
    );
  } finally {
    source.extraFields = undefined;
  }
  await assertNothingWritten();
});

test('dumps of format 2 whose projects lack their stored health, or a line without it: refused, nothing written', async () => {
  source.extraFields = { projects: ['repository_paths'] };
  try {
    const result = await importWith(undefined);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /lack stored fields that filters, the search or orderings read \(projects: health\)/);
  } finally {
    source.extraFields = undefined;
  }
  await assertNothingWritten();
  const project = (key: string, extra: Record<string, unknown>) =>
    JSON.stringify({
      params: { project_id: key },
      record: {
        key,
        name: key,
        level: 'other',
        type: 'tool',
        description: '',
        created_at: '2020-01-01T00:00:00Z',
        updated_at: '2020-01-01T00:00:00Z',
      },
      extra: { repository_paths: [], ...extra },
    });
  source.lines = { projects: [project('tool', { health: null }), project('kit', {})] };
  try {
    const result = await importWith(undefined);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /1 of 2 projects lack their stored health \(extra\.health\)/);
  } finally {
    source.lines = undefined;
  }
  await assertNothingWritten();
});

test('an issue naming a label its repository lacks, or without its labels: refused, saying so, nothing written', async () => {
  const inRepository = { organization_id: 'acme', repository_id: 'tool' };
  const dates = { created_at: '2020-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' };
  const issue = (extra: Record<string, unknown>) =>
    JSON.stringify({
      params: { ...inRepository, issue_id: 1 },
      record: { title: 'One', state: 'open', body: '', url: '', ...dates },
      extra: { comments_count: 0, ...extra },
    });
  const base = {
    repositories: [
      JSON.stringify({
        params: inRepository,
        record: {
          name: 'tool',
          description: '',
          commits_count: 0,
          contributors_count: 0,
          forks_count: 0,
          stars_count: 0,
          open_issues_count: 0,
          ...dates,
        },
        extra: { language: '', is_archived: false, is_fork: false },
      }),
    ],
    labels: [
      JSON.stringify({
        params: inRepository,
        record: { name: 'bug', description: '', color: 'ff0000' },
        extra: { nest_created_at: dates.created_at, nest_updated_at: dates.updated_at },
      }),
    ],
  };
  try {
    for (const [extra, message] of [
      [
        { labels: ['bug', 'Bug'], assignees: ['ghost'] },
        /1 of 2 labels of issues are not names of labels of the issue's repository/,
      ],
      [{ assignees: [] }, /1 of 1 labels of issues are not names of labels/],
      [{ labels: [], assignees: 'ghost' }, /1 of 1 assignees of issues are not logins/],
    ] as const) {
      source.lines = { ...base, issues: [issue(extra)] };
      const result = await importWith(undefined);
      assert.equal(result.code, 1, result.stderr);
      assert.match(result.stderr, message);
      await assertNothingWritten();
    }
  } finally {
    source.lines = undefined;
  }
});

test('the same stand-in, not hostile, a redirect on its own origin followed: imported (the checks above hold)', async () => {
  const result = await importWith((request, response) => {
    if (request.url === '/moved/members.ndjson.gz') return void response.writeHead(200).end(members.body);
    response.writeHead(308, { location: '/moved/members.ndjson.gz' }).end();
  });
  assert.equal(result.code, 0, result.stderr);
  assert.ok(source.requests.some((request) => request.url === '/moved/members.ndjson.gz' && request.key === KEY));
  const status = await runCli(['status', '--json'], env);
  const organizations = (JSON.parse(status.stdout) as { resource: string; stored: number }[]).find(
    (row) => row.resource === 'organizations',
  );
  assert.equal(organizations?.stored, 1);
});
