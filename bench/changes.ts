// npm run bench:changes (issue 43): what following changes costs. This file measures the change log itself (migration
// 0014's row triggers) on a large import and sync, with the log against without it in the same run; then it runs the
// stream's part (bench/changes-stream.ts: commit-to-stream latency, 1,000 open streams) and the webhooks' part
// (bench/changes-webhooks.ts: commit-to-delivery latency). Results: bench/CHANGES.md (and theirs, named by them).
//
// The log's part, per engine (PostgreSQL at BENCH_DATABASE_URL; PGlite in a temporary DATA_DIR, smaller):
//   1. two dataset folders (bench/scale-import.ts): ISSUES issues, then the same with every UPDATE_EVERY-th issue edited
//      upstream (title, state, updated_at) and NEW_ISSUES more;
//   2. `cds migrate` and `cds import --from` the first folder into an empty database: the baseline, which records no
//      change (docs/changes.md), timed;
//   3. two copies of that database; on one the log is off (its triggers disabled: the database as it was before
//      migration 0014); `cds import --from` the second folder into each (the "sync": an upsert that updates and creates
//      issues), off first, then on, timed, and the changes counted;
//   4. the database's own write without the import's reading: an UPDATE of DIRECT_ROWS issues' titles, in transactions
//      rolled back, alternating off (`cds.changes = off` for the transaction: the triggers' WHEN is false) and on
//      (REPEAT times each), median time.
//
//   npm run bench:changes                                 # both engines: 1M issues on PostgreSQL, 100k on PGlite
//   ENGINES=postgres ISSUES=100000 npm run bench:changes  # smaller, one engine
//   ONLY=log npm run bench:changes                        # the log's part alone (ONLY=stream, ONLY=webhooks: theirs)
//   ENGINES=pglite ONLY=webhooks npm run bench:changes     # the webhooks' part on the embedded database only
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { admin, issue, run, writeDataset, type ImportSize } from './scale-import.ts';
import { cpuMicros } from './cpu.ts';
import { benchChangesStream } from './changes-stream.ts';
import { benchWebhooks, formatWebhookResults } from './changes-webhooks.ts';
import { openDatabase, pgliteDir, type OpenOptions } from '../src/db/index.ts';
import { sql } from 'kysely';
import { LOGGED } from '../src/db/migrations/0014_change_log.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ENGINES = (process.env.ENGINES ?? 'postgres,pglite').split(',');
const ONLY = process.env.ONLY;
const ISSUES = Number(process.env.ISSUES ?? 1_000_000);
const PGLITE_ISSUES = Number(process.env.PGLITE_ISSUES ?? 100_000);
const UPDATE_EVERY = Number(process.env.UPDATE_EVERY ?? 2);
const NEW_SHARE = Number(process.env.NEW_SHARE ?? 0.1);
const DIRECT_ROWS = Number(process.env.DIRECT_ROWS ?? 200_000);
const REPEAT = Number(process.env.REPEAT ?? 3);

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const s = (seconds: number) => seconds.toFixed(1);

function sizeOf(issues: number): ImportSize {
  return {
    issues,
    repositories: Math.max(1, Math.floor(issues / 10)),
    members: Math.max(1, Math.floor(issues / 10)),
    releases: Math.floor(issues / 20),
  };
}

/** The upstream after some activity: every UPDATE_EVERY-th issue edited (closed or reopened, retitled). */
function editedIssue(base: number) {
  return (i: number, size: ImportSize) => {
    const record = issue(i, size) as Record<string, unknown>;
    if (i >= base || i % UPDATE_EVERY !== 0) return record;
    return {
      ...record,
      title: `${String(record.title)} (edited)`,
      state: record.state === 'open' ? 'closed' : 'open',
      updated_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().replace('.000Z', 'Z'),
    };
  };
}

/** A place for a database: a database on the server, or a data folder of PGlite. */
interface Place {
  label: string;
  /** `cds`'s DATABASE_URL ('' for PGlite) and extra environment. */
  url: string;
  env: Record<string, string>;
  /** Runs `fn` on one connection of this database (closed afterwards). */
  session<T>(fn: (query: <R>(text: string) => Promise<R[]>) => Promise<T>): Promise<T>;
  /** A copy of this (closed) database. */
  copy(): Promise<Place>;
  drop(): Promise<void>;
}

async function session<T>(
  options: OpenOptions,
  fn: (query: <R>(text: string) => Promise<R[]>) => Promise<T>,
): Promise<T> {
  const database = await openDatabase(options);
  try {
    return await database.db
      .connection()
      .execute((connection) => fn(async <R>(text: string) => (await sql.raw<R>(text).execute(connection)).rows));
  } finally {
    await database.close();
  }
}

async function serverPlace(template?: string): Promise<Place> {
  const name = `cds_changes_${crypto.randomBytes(5).toString('hex')}`;
  await admin(SERVER_URL, template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  const url = Object.assign(new URL(SERVER_URL), { pathname: `/${name}` }).toString();
  return {
    label: 'PostgreSQL',
    url,
    env: {},
    session: (fn) => session({ databaseUrl: url, poolSize: 1 }, fn),
    copy: () => serverPlace(name),
    drop: () =>
      process.env.KEEP ? Promise.resolve() : admin(SERVER_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function pglitePlace(from?: string): Promise<Place> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-changes-pglite-'));
  if (from) await fs.cp(from, dir, { recursive: true });
  return {
    label: 'PGlite',
    url: '',
    env: { DATA_DIR: dir },
    session: (fn) => session({ dataDir: pgliteDir(dir) }, fn),
    copy: () => pglitePlace(dir),
    drop: () => fs.rm(dir, { recursive: true, force: true }),
  };
}

/**
 * `cds args` on the place, timed; on the server also the CPU seconds of its database's backends (polled from /proc
 * while it runs): what the log's triggers add, less blurred than wall time by the other work of a shared machine.
 */
async function cds(place: Place, args: string[]): Promise<{ seconds: number; databaseCpu: number | undefined }> {
  const name = place.url && new URL(place.url).pathname.slice(1);
  const cpu = new Map<number, number>();
  let running = true;
  const polling = (async () => {
    if (!name) return;
    const client = new pg.Client({ connectionString: SERVER_URL });
    await client.connect();
    try {
      while (running) {
        const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
          name,
        ]);
        for (const { pid } of rows) cpu.set(pid, Math.max(cpu.get(pid) ?? 0, await cpuMicros([pid])));
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      await client.end();
    }
  })();
  const result = await run(ROOT, place.url, args, place.env).finally(() => (running = false));
  await polling;
  if (result.exitCode !== 0) throw new Error(`cds ${args.join(' ')} failed (${result.exitCode}): ${result.stdout}`);
  const total = [...cpu.values()].reduce((a, b) => a + b, 0) / 1e6;
  return { seconds: result.seconds, databaseCpu: name ? total : undefined };
}

/** Today's database: the log's triggers disabled (as before migration 0014; the `changes` table stays, unused). */
const LOG_OFF = LOGGED.map(
  ({ table }) =>
    `ALTER TABLE ${table} DISABLE TRIGGER cds_change_insert, DISABLE TRIGGER cds_change_update, DISABLE TRIGGER cds_change_delete`,
);

async function countChanges(place: Place): Promise<Record<string, number>> {
  const rows = await place.session((query) =>
    query<{ action: string; count: string }>('SELECT action, count(*) AS count FROM changes GROUP BY action'),
  );
  return Object.fromEntries(rows.map((r) => [r.action, Number(r.count)]));
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

interface Timing {
  /** Median milliseconds, wall. */
  off: number;
  on: number;
  /** Median milliseconds of the backend's CPU (PostgreSQL only: PGlite runs in this process). */
  offCpu: number | undefined;
  onCpu: number | undefined;
}

/** The database's UPDATE of `rows` issues' titles, rolled back, log off and on alternately: median times. */
async function directWrite(place: Place, rows: number): Promise<Timing> {
  const times = { off: [] as number[], on: [] as number[], offCpu: [] as number[], onCpu: [] as number[] };
  await place.session(async (query) => {
    const [{ id } = { id: '0' }] = await query<{ id: string }>(
      `SELECT id FROM issues ORDER BY id OFFSET ${rows} LIMIT 1`,
    );
    const [{ pid }] = (await query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
    const server = place.url !== '';
    for (let n = 0; n < REPEAT; n++) {
      for (const mode of ['off', 'on'] as const) {
        await query('BEGIN');
        await query(`SELECT set_config('cds.changes', '${mode}', true)`);
        const [started, cpu] = [performance.now(), server ? await cpuMicros([pid]) : 0];
        await query(`UPDATE issues SET title = title || ' (direct)' WHERE id < ${Number(id)}`);
        times[mode].push(performance.now() - started);
        if (server) times[`${mode}Cpu`].push(((await cpuMicros([pid])) - cpu) / 1000);
        await query('ROLLBACK');
      }
    }
  });
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return {
    off: median(times.off)!,
    on: median(times.on)!,
    offCpu: median(times.offCpu),
    onCpu: median(times.onCpu),
  };
}

async function logPart(engine: string): Promise<void> {
  const issues = engine === 'pglite' ? PGLITE_ISSUES : ISSUES;
  const added = Math.round(issues * NEW_SHARE);
  const size = sizeOf(issues);
  const newPlace = () => (engine === 'pglite' ? pglitePlace() : serverPlace());
  const folders = await Promise.all([0, 1].map(() => fs.mkdtemp(path.join(os.tmpdir(), 'cds-changes-data-'))));
  const [first, second] = folders as [string, string];
  const places: Place[] = [];
  try {
    const owasp = path.join(ROOT, 'data', 'owasp');
    await writeDataset(first, size, owasp);
    await writeDataset(second, { ...size, issues: issues + added }, owasp, editedIssue(issues));
    const base = await newPlace();
    places.push(base);
    console.log(`### ${base.label}: ${issues} issues; load average ${load()}\n`);
    await cds(base, ['migrate']);
    const baseline = await cds(base, ['import', '--from', first]);
    const recorded = await countChanges(base);
    const [off, on] = [await base.copy(), await base.copy()];
    places.push(off, on);
    await off.session(async (query) => {
      for (const statement of LOG_OFF) await query(statement);
    });
    const edited = Math.ceil(issues / UPDATE_EVERY);
    const sync = { off: await cds(off, ['import', '--from', second]), on: await cds(on, ['import', '--from', second]) };
    const logged = await countChanges(on);
    const notLogged = await countChanges(off);
    const total = sum(logged);
    const rate = (seconds: number) => Math.round((issues + added) / seconds);
    const dbCpu = (r: { databaseCpu: number | undefined }) => (r.databaseCpu === undefined ? '' : s(r.databaseCpu));
    console.log('| write | change log | seconds | issues/s | database CPU s | changes recorded | with log / without |');
    console.log('|---|---|---:|---:|---:|---:|---:|');
    console.log(
      `| first import (${issues} issues, baseline) | on (records nothing by design) | ${s(baseline.seconds)} | ${Math.round(issues / baseline.seconds)} | ${dbCpu(baseline)} | ${sum(recorded)} | |`,
    );
    const ratio = rate(sync.on.seconds) / rate(sync.off.seconds);
    const cpuRatio =
      sync.on.databaseCpu && sync.off.databaseCpu
        ? `; database CPU ${((sync.off.databaseCpu / sync.on.databaseCpu) * 100).toFixed(0)} %`
        : '';
    const what = `sync: \`cds import --from\` ${issues + added} issues (${edited} edited, ${added} new)`;
    console.log(
      `| ${what} | off | ${s(sync.off.seconds)} | ${rate(sync.off.seconds)} | ${dbCpu(sync.off)} | ${sum(notLogged)} | |`,
    );
    console.log(
      `| ${what} | on | ${s(sync.on.seconds)} | ${rate(sync.on.seconds)} | ${dbCpu(sync.on)} | ${total} (${JSON.stringify(logged)}) | **${(ratio * 100).toFixed(0)} %**${cpuRatio} |`,
    );
    const rows = Math.min(DIRECT_ROWS, issues);
    const direct = await directWrite(on, rows);
    const cpu =
      direct.offCpu && direct.onCpu
        ? `; CPU ${s(direct.offCpu / 1000)} / ${s(direct.onCpu / 1000)} s, ${((direct.offCpu / direct.onCpu) * 100).toFixed(0)} %`
        : '';
    console.log(
      `| the database alone: UPDATE ${rows} issues' titles (median of ${REPEAT}, rolled back) | off / on | ${s(direct.off / 1000)} / ${s(direct.on / 1000)} | ${Math.round(rows / (direct.off / 1000))} / ${Math.round(rows / (direct.on / 1000))} | | ${rows} | **${((direct.off / direct.on) * 100).toFixed(0)} %**${cpu} |`,
    );
    console.log(`\nLoad average after: ${load()}\n`);
  } finally {
    for (const place of places) await place.drop();
    for (const folder of folders) await fs.rm(folder, { recursive: true, force: true });
  }
}

/** The stream's part (bench/changes-stream.ts), on the PostgreSQL server. */
async function streamPart(): Promise<void> {
  console.log('\n## The stream: commit to stream, 1,000 open streams (bench/changes-stream.ts)\n');
  const { latency, fanOut } = await benchChangesStream({ serverUrl: SERVER_URL });
  console.log(
    `- commit to stream, ${latency.changes} changes: p50 ${latency.p50Ms.toFixed(0)} ms, p95 ${latency.p95Ms.toFixed(0)} ms, max ${latency.maxMs.toFixed(0)} ms`,
  );
  console.log(
    `- ${fanOut.streams} open streams: heap ${fanOut.heapPerStreamKb.toFixed(1)} kB and RSS ${fanOut.rssPerStreamKb.toFixed(1)} kB per stream; one change to all: first after ${fanOut.firstMs.toFixed(0)} ms, all after ${fanOut.allMs.toFixed(0)} ms\n`,
  );
}

/** The webhooks' part (bench/changes-webhooks.ts): the embedded database, and the server when asked for. */
async function webhooksPart(): Promise<void> {
  console.log('\n## Webhooks: commit to delivery (bench/changes-webhooks.ts)\n');
  const results = await benchWebhooks(ENGINES.includes('postgres') ? { postgresUrl: SERVER_URL } : {});
  console.log(formatWebhookResults(results));
}

async function main(): Promise<void> {
  const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  console.log(`# bench:changes at ${commit}, ${new Date().toISOString()}`);
  console.log(`# ${os.cpus().length} CPUs, load average ${load()}\n`);
  if (!ONLY || ONLY === 'log') {
    console.log('## The change log: an import and a sync, with the log and without\n');
    for (const engine of ENGINES) await logPart(engine);
  }
  if ((!ONLY || ONLY === 'stream') && ENGINES.includes('postgres')) await streamPart();
  if (!ONLY || ONLY === 'webhooks') await webhooksPart();
}

await main();
// The stream's part leaves its server's timers behind.
process.exit(0);
