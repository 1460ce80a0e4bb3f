// Test tier: system (floods a server process to prove a memory bound): `npm run test:system`, CI.
// No GraphQL request can exhaust the server's heap (issue 25): the server as a process with a 512 MB heap, one
// anonymous client sending distinct documents of every kind that used to stay in memory (a ~1 MB invalid document left
// ~83 MB in mercurius' cache of failed documents; ~50 of them killed the process). Its heap after a full collection is
// read through test/heap-probe.js (an IPC channel of the test's own). On the engine of the pass: a PostgreSQL test
// database with DATABASE_URL, the embedded database otherwise.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestDb, seedDataDir, type TestDatabase } from './helpers.ts';
import { childEnv, exited, freePort, ROOT, SERVER_ARGS, waitFor200 } from './process.ts';

const HEAP_GROWTH_LIMIT = 50 * 2 ** 20;

let server: ChildProcess;
let output = '';
let base = '';
let dataDir = '';
let database: TestDatabase | undefined;

before(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-gql-memory-'));
  if (process.env.DATABASE_URL) database = await createTestDb();
  else await seedDataDir(dataDir);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const args = ['--max-old-space-size=512', '--expose-gc', '--import', path.join(ROOT, 'test/heap-probe.js')];
  server = spawn(process.execPath, [...args, ...SERVER_ARGS], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: childEnv({
      DATA_DIR: dataDir,
      DATABASE_URL: database?.url,
      PORT: String(port),
      AUTO_IMPORT: 'false',
      // Every document reaches the parser: what is measured is what the GraphQL layer keeps, not the rate limit.
      RATE_LIMIT_PER_SECOND: '1000000',
      LOG_LEVEL: 'error',
    }),
  });
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitFor200(`${base}/status/`, 60_000);
});

after(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGKILL');
    await exited(server);
  }
  await database?.drop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

/** The server's heap in use after a full collection. */
function heapUsed(): Promise<number> {
  return new Promise((resolve, reject) => {
    const answer = (message: unknown) => {
      server.off('exit', died);
      resolve((message as { heapUsed: number }).heapUsed);
    };
    const died = () => {
      server.off('message', answer);
      reject(new Error(`the server died\n${output.slice(-3000)}`));
    };
    server.once('message', answer);
    server.once('exit', died);
    server.send('heap');
  });
}

/** An answer read off the wire: its status and body. */
interface Answer {
  status: number;
  text: string;
}

/**
 * POSTs a body to /graphql/ on a connection of its own, as curl does: the headers (with Content-Length, or chunked)
 * and the first 40 kB, then the rest only if no answer came meanwhile. A body over the limit is answered 413 without
 * being read (or once 32 kB of a chunked one are), and the server closes the connection (Fastify's choice): a client
 * that wrote the whole megabyte first gets EPIPE and a reset that loses the answer (fetch does). The wait for an
 * answer is a real one only for a server that reads the whole body, i.e. one without the limit.
 */
function post(body: string, chunked = false): Promise<Answer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const received: Buffer[] = [];
    socket.on('error', () => {}); // EPIPE or ECONNRESET once the server has answered and closed
    socket.on('close', () => {
      const raw = Buffer.concat(received).toString('utf8');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(raw);
      if (!match) return reject(new Error(`no answer: ${JSON.stringify(raw.slice(0, 200))}\n${output.slice(-2000)}`));
      const split = raw.indexOf('\r\n\r\n');
      const rest = raw.slice(split + 4);
      resolve({
        status: Number(match[1]),
        text: /transfer-encoding: chunked/i.test(raw.slice(0, split)) ? unchunk(rest) : rest,
      });
    });
    const payload = Buffer.from(body);
    const framed = chunked
      ? Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n0\r\n\r\n')])
      : payload;
    const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${payload.length}`;
    socket.write(
      `POST /graphql/ HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n${framing}\r\nConnection: close\r\n\r\n`,
    );
    const first = 40 * 1024;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      clearTimeout(timer);
      timer = undefined;
    });
    if (framed.length <= first) return void socket.end(framed);
    socket.write(framed.subarray(0, first));
    timer = setTimeout(() => socket.end(framed.subarray(first)), 2_000);
  });
}

/** The body of a chunked answer. */
function unchunk(text: string): string {
  let body = '';
  for (let rest = text; ;) {
    const line = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!size) return body;
    body += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

const fields = (count: number, field = 'login') => Array.from({ length: count }, () => field).join(' ');
const MB = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

test('100 distinct ~1 MB invalid documents and 600 other distinct documents leave the heap within 50 MB', async (t) => {
  // Warm up every path once, so that what is measured is what stays, not code loaded on first use.
  for (let i = 0; i < 20; i++) {
    await post(JSON.stringify({ query: `{ me { login } } # ${i}` }));
    await post(JSON.stringify({ query: `{ me { nope } } # ${i}` }));
  }
  const before = await heapUsed();

  // The attack of the issue: ~1 MB of fields, a counter in a comment making each text distinct.
  const huge = fields(170_000);
  for (let i = 0; i < 100; i++) {
    // Half with their length announced (refused before any of the body is read), half chunked (refused at 32 kB).
    const { status, text } = await post(JSON.stringify({ query: `# ${i}\n{ me { ${huge} } }` }), i % 2 === 1);
    assert.equal(status, 413, text);
    assert.deepEqual(JSON.parse(text), { message: 'Request body is too large' });
  }
  // Under the body limit, over the parser's token limit: refused while parsing.
  const tokens = fields(4_000);
  for (let i = 0; i < 200; i++) {
    const { status, text } = await post(JSON.stringify({ query: `# ${i}\n{ me { ${tokens} } }` }));
    assert.equal(status, 400, text);
    assert.match(text, /contains more th(?:an|at) 2000 tokens/);
  }
  // Under the token limit, invalid: 300 fields (over the limit of 200 fields).
  const invalid = fields(300);
  for (let i = 0; i < 200; i++) {
    const { status, text } = await post(JSON.stringify({ query: `# ${i}\n{ me { ${invalid} } }` }));
    assert.equal(status, 400, text);
    assert.match(text, /more than 200 fields/);
  }
  // Valid, distinct, as large as the limits allow: kept in the cache of parsed documents, whose entries are few.
  const aliases = Array.from({ length: 190 }, (_, i) => `a${i}: login`).join(' ');
  for (let i = 0; i < 200; i++) {
    const { status, text } = await post(JSON.stringify({ query: `# ${i}\n{ me { ${aliases} } }` }));
    assert.equal(status, 200, text);
  }

  const afterAll = await heapUsed();
  t.diagnostic(`heap in use after a full collection: ${MB(before)} MB before, ${MB(afterAll)} MB after`);
  assert.ok(
    afterAll - before < HEAP_GROWTH_LIMIT,
    `the heap grew by ${MB(afterAll - before)} MB (limit ${MB(HEAP_GROWTH_LIMIT)})`,
  );
  assert.equal(server.exitCode, null, output);
  assert.equal((await fetch(`${base}/livez`)).status, 200);
  assert.equal((await post(JSON.stringify({ query: '{ me { login } }' }))).status, 200);
});
