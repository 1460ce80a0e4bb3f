// The default start on the machine's Node (issue 45, item 1): `npm start` in this checkout on a fresh data folder (the
// embedded database, the bundled data imported at the first start), a key from `cds users create --key`, then
// REQUESTS varied search and list requests (most URLs asked once, so that nearly every one reaches the database),
// CONCURRENCY at a time; it counts the answers by status, the 503s above all (Node 20's V8 trap inside PGlite:
// docs/decisions.md, "pglite-trap"), and reads the Node the server says it runs on from its `ready` line.
//
//   npm run bench:default            (REQUESTS=50000 CONCURRENCY=8; EMBEDDED_NODE is passed on to npm start)
//
// Exit 1 when any answer was a 503 or a 5xx, or the server restarted its database.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const REQUESTS = Number(process.env.REQUESTS ?? 50_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-node20-default-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
// The environment a user's shell has, with DATABASE_URL and REDIS_URL left out: the default start.
const env: Record<string, string> = { ...(process.env as Record<string, string>) };
delete env.DATABASE_URL;
delete env.REDIS_URL;
Object.assign(env, { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', RATE_LIMIT_PER_SECOND: '1000000' });

const machineNode = spawnSync('node', ['--version'], { encoding: 'utf8', env }).stdout.trim();
console.log(`machine's node: ${machineNode}; npm start in ${ROOT}, DATA_DIR=${dataDir}, port ${port}`);
const started = performance.now();
const server = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
const stopServer = () => {
  try {
    process.kill(-server.pid!, 'SIGTERM');
  } catch {
    // gone already
  }
};
process.on('exit', stopServer);

const ready = await new Promise<{ node: string }>((resolve, reject) => {
  const timer = setInterval(() => {
    const line = output.split('\n').find((text) => text.includes('"msg":"ready"'));
    if (line) {
      clearInterval(timer);
      resolve(JSON.parse(line) as { node: string });
    }
  }, 200);
  server.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
});
console.log(`ready in ${((performance.now() - started) / 1000).toFixed(1)} s on node ${ready.node}`);

const created = spawnSync(process.execPath, [path.join(ROOT, 'bin/cds.js'), 'users', 'create', 'bench', '--key', 'b'], {
  cwd: ROOT,
  env,
  encoding: 'utf8',
});
if (created.status !== 0) throw new Error(`cds users create: ${created.stderr}`);
const key = created.stdout.trim();

async function json(url: string): Promise<{ items: Record<string, unknown>[] }> {
  const res = await fetch(`${base}${url}`, { headers: { 'x-api-key': key } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { items: Record<string, unknown>[] };
}

// Words to search for and values to filter by, from the data itself.
const words = new Set<string>();
const countries = new Set<string>();
for (const list of ['chapters', 'projects', 'committees', 'events', 'repositories']) {
  for (const item of (await json(`/api/v0/${list}/?limit=100`)).items) {
    for (const word of String(item.name ?? '').split(/[^\p{L}\p{N}]+/u)) if (word.length >= 3) words.add(word);
    if (item.country) countries.add(String(item.country));
  }
}
const vocabulary = [...words];
const countryList = [...countries];
// mulberry32: the same requests every run (an LCG's low bits repeat within a few steps: few distinct URLs).
let seed = 45;
const random = (n: number) => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
};
const pick = <T>(values: readonly T[]) => values[random(values.length)]!;
/** A word, a prefix of one, or a misspelling: the trigram search's inputs. */
const term = () => {
  const word = pick(vocabulary);
  const kind = random(4);
  if (kind === 0) return word.slice(0, 3 + random(Math.max(1, word.length - 2)));
  if (kind === 1) return `${word}${String.fromCharCode(97 + random(26))}`;
  if (kind === 2) return `${word} ${pick(vocabulary)}`;
  return word;
};
const LEVELS = ['flagship', 'production', 'lab', 'incubator'];
const LANGUAGES = ['python', 'javascript', 'java', 'go', 'ruby', 'typescript', 'php', 'c', 'shell'];
const page = () => 1 + random(3);
const limit = () => 1 + random(100);
const makers: (() => string)[] = [
  () => `/api/v0/search/?q=${encodeURIComponent(term())}&limit=${1 + random(50)}&page=${page()}`,
  () =>
    `/api/v0/search/?q=${encodeURIComponent(term())}&resource=${pick(['chapters', 'projects', 'repositories'])}` +
    `&limit=${1 + random(50)}`,
  () => `/api/v0/chapters/?q=${encodeURIComponent(term())}&limit=${limit()}`,
  () => `/api/v0/chapters/?country=${encodeURIComponent(pick(countryList))}&limit=${limit()}&page=${page()}`,
  () => `/api/v0/projects/?q=${encodeURIComponent(`level:${pick(LEVELS)} ${term()}`)}&limit=${limit()}`,
  () =>
    `/api/v0/projects/?level=${pick(LEVELS)}&limit=${limit()}&page=${page()}` +
    `&ordering=${pick(['name', '-name', '-created_at', 'updated_at'])}`,
  () =>
    `/api/v0/repositories/?q=${encodeURIComponent(`language:${pick(LANGUAGES)} stars:>${random(200)}`)}` +
    `&limit=${limit()}`,
  () => `/api/v0/repositories/?q=${encodeURIComponent(term())}&limit=${limit()}&page=${page()}`,
  () => `/api/v0/issues/?state=${pick(['open', 'closed'])}&limit=${limit()}&page=${1 + random(50)}`,
  () =>
    `/api/v0/events/?limit=${limit()}&page=${page()}` +
    `&ordering=${pick(['start_date', '-start_date', 'end_date', '-latitude'])}`,
  () => `/api/v0/members/?limit=${limit()}&page=${1 + random(10)}&ordering=${pick(['login', '-name', 'created_at'])}`,
  () => `/api/v0/releases/?limit=${limit()}&page=${1 + random(5)}&ordering=${pick(['created_at', '-published_at'])}`,
];

const statuses = new Map<number, number>();
let failures = 0;
let sent = 0;
let done = 0;
const distinct = new Set<string>();
const first503: string[] = [];
const first400: string[] = [];
const t0 = performance.now();
async function worker(): Promise<void> {
  while (sent < REQUESTS) {
    sent++;
    const url = pick(makers)();
    distinct.add(url);
    try {
      const res = await fetch(`${base}${url}`, { headers: { 'x-api-key': key } });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500 && first503.length < 5) first503.push(`${res.status} ${url}`);
      if (res.status === 400 && first400.length < 3) first400.push(url);
    } catch {
      failures++;
    }
    if (++done % 5000 === 0) console.log(`${done} answered, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker));
const seconds = (performance.now() - t0) / 1000;
// The embedded database's worker ended (app.ts logs it at level error): a trap, then a restart.
const restarts = output.split('\n').filter((line) => line.includes('"msg":"the embedded database stopped'));
const nodeWarning = output.includes('V8 now and then fails inside the embedded database');

stopServer();
await new Promise((resolve) => server.once('exit', resolve));
await fs.rm(dataDir, { recursive: true, force: true });

const count = (status: number) => statuses.get(status) ?? 0;
const serverErrors = [...statuses].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0);
console.log(
  JSON.stringify(
    {
      machineNode,
      serverNode: ready.node,
      requests: REQUESTS,
      // The response cache answers a URL asked before (while the data version stands): these reached the database.
      distinctUrls: distinct.size,
      concurrency: CONCURRENCY,
      seconds: Math.round(seconds),
      perSecond: Math.round(REQUESTS / seconds),
      statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b)),
      answers503: count(503),
      networkFailures: failures,
      databaseRestarts: restarts.length,
      nodeWarningAtStart: nodeWarning,
      first5xx: first503,
      first400: first400,
    },
    null,
    2,
  ),
);
process.exitCode = serverErrors > 0 || failures > 0 || restarts.length > 0 ? 1 : 0;
