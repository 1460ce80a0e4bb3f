// npm run bench:json: where an uncached list page's JSON is built (issue 32, item 3), measured both ways on both
// engines, with prepared statements on the PostgreSQL server:
// - sql: the service's page statement as it is, the database writing the items with row_to_json (one text value);
// - rows: the same page's columns as rows, the items then serialized in Node by fast-json-stringify with the item's
//   response schema (what Fastify would do with the rows).
// One client, statements one after the other (no HTTP: what differs is the query and the serialization), alternating
// blocks of each way so that drift falls on both. CPU per page: this process (user + system; on PGlite it includes the
// database's worker thread) and, on the server, every PostgreSQL process (/proc). Both ways must give the same items
// text, which is checked. Results go to bench/JSON-WHERE.md.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { CompiledQuery } from 'kysely';
import fastJson from 'fast-json-stringify';
import type { TSchema } from '@sinclair/typebox';
import { openDatabase, pgliteDir, type Db } from '../src/db/index.ts';
import { IssueItem } from '../src/api/v0/issues/issues.schemas.ts';
import { ChapterItem } from '../src/api/v0/chapters/chapters.schemas.ts';
import { prepareBenchData } from './seed.ts';
import { cpuMicros, postgresPids } from './cpu.ts';
import { captureSql } from './pgbench.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PAGES = Number(process.env.PAGES ?? 400);
const ROUNDS = 3;
const ISSUES = 5_000;

const LISTS: { name: string; path: string; item: TSchema }[] = [
  { name: 'issues, 100 items', path: '/api/v0/issues/?limit=100', item: IssueItem },
  { name: 'chapters, 100 items', path: '/api/v0/chapters/?limit=100', item: ChapterItem },
];

interface Way {
  statement: CompiledQuery;
  /** The items text of one page from the statement's result. */
  render(rows: Record<string, unknown>[]): string;
}

/** The page statement's two forms: as the service sends it, and selecting the item columns as rows. */
function ways(statement: CompiledQuery, item: TSchema): { sql: Way; rows: Way } {
  const head =
    /^\s*select string_agg\(row_to_json\(j\)::text, ','\) as items, count\(\*\) as rows,\s*\(array_agg\((json_build_array\(.*?\)::text)\)\)\[count\(\*\)\] as last\s+from \(/s.exec(
      statement.sql,
    );
  if (!head) throw new Error(`not a page statement: ${statement.sql.slice(0, 200)}`);
  const rowsSql = `select j.*, ${head[1]} as "__key" from (${statement.sql.slice(head[0].length)}`;
  const stringify = fastJson(item as never);
  return {
    sql: {
      statement,
      render: (rows) => String(rows[0]?.items ?? ''),
    },
    rows: {
      statement: CompiledQuery.raw(rowsSql, [...statement.parameters]),
      render: (rows) => {
        let out = '';
        for (let i = 0; i < rows.length; i++) out += (i ? ',' : '') + stringify(rows[i]);
        return out;
      },
    },
  };
}

interface Measure {
  pagesPerSecond: number;
  node: number;
  database: number;
}

/** PAGES pages of one way, one after the other: pages/s and CPU µs per page of this process and of PostgreSQL. */
async function run(db: Db, way: Way, server: boolean): Promise<Measure> {
  const pids = server ? postgresPids() : [];
  const cpu0 = process.cpuUsage();
  const db0 = await cpuMicros(pids);
  const started = performance.now();
  for (let i = 0; i < PAGES; i++) {
    const { rows } = await db.executeQuery<Record<string, unknown>>(way.statement);
    way.render(rows);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const db1 = await cpuMicros(pids);
  return { pagesPerSecond: PAGES / seconds, node: (cpu.user + cpu.system) / PAGES, database: (db1 - db0) / PAGES };
}

interface Line {
  engine: string;
  list: string;
  way: string;
  measure: Measure;
}

async function measureEngine(engine: string, db: Db, server: boolean, statements: Map<string, CompiledQuery[]>) {
  const lines: Line[] = [];
  for (const list of LISTS) {
    const page = statements.get(list.path)!.find((q) => q.sql.includes('row_to_json(j)'))!;
    const both = ways(page, list.item);
    // The same items both ways (what a client would read).
    const a = both.sql.render((await db.executeQuery<Record<string, unknown>>(both.sql.statement)).rows);
    const b = both.rows.render((await db.executeQuery<Record<string, unknown>>(both.rows.statement)).rows);
    const same = JSON.stringify(JSON.parse(`[${a}]`)) === JSON.stringify(JSON.parse(`[${b}]`));
    console.error(`${engine} ${list.name}: ${a === b ? 'identical text' : same ? 'same JSON values' : 'DIFFERENT'}`);
    // Warm-up, then alternating blocks.
    await run(db, both.sql, server);
    await run(db, both.rows, server);
    const sums = { sql: [] as Measure[], rows: [] as Measure[] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of r % 2 ? (['rows', 'sql'] as const) : (['sql', 'rows'] as const))
        sums[name].push(await run(db, both[name], server));
    }
    for (const name of ['sql', 'rows'] as const) {
      const m = sums[name];
      const mean = (pick: (x: Measure) => number) => m.reduce((s, x) => s + pick(x), 0) / m.length;
      const measure = {
        pagesPerSecond: mean((x) => x.pagesPerSecond),
        node: mean((x) => x.node),
        database: mean((x) => x.database),
      };
      lines.push({ engine, list: list.name, way: name, measure });
      console.error(
        `${engine} ${list.name} ${name}: ${Math.round(measure.pagesPerSecond)} pages/s, Node ${Math.round(measure.node)} µs, PostgreSQL ${Math.round(measure.database)} µs`,
      );
    }
  }
  return lines;
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const name = `cds_json_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = Object.assign(new URL(PG_URL), { pathname: `/${name}` }).toString();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-json-'));
  const lines: Line[] = [];
  try {
    const server = await openDatabase({ databaseUrl: url, preparedStatements: true, poolSize: 1 });
    try {
      await prepareBenchData(server.db, ISSUES);
      const statements = await captureSql(
        url,
        LISTS.map((l) => l.path),
      );
      lines.push(...(await measureEngine('PostgreSQL, prepared', server.db, true, statements)));
      const lite = await openDatabase({ dataDir: pgliteDir(dataDir) });
      try {
        await prepareBenchData(lite.db, ISSUES);
        lines.push(...(await measureEngine('PGlite', lite.db, false, statements)));
      } finally {
        await lite.close();
      }
    } finally {
      await server.close();
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
  await fs.writeFile(path.join(ROOT, 'bench/JSON-WHERE.md'), report(lines));
  console.error('written bench/JSON-WHERE.md');
}

function report(lines: Line[]): string {
  const rows = lines.map(({ engine, list, way, measure: m }) => {
    const other = lines.find((l) => l.engine === engine && l.list === list && l.way === 'sql')!.measure;
    const total = m.node + m.database;
    return `| ${engine} | ${list} | ${way === 'sql' ? 'SQL (row_to_json)' : 'rows, serialized in Node'} | ${Math.round(m.pagesPerSecond)} | ${Math.round(m.node)} | ${engine.startsWith('PGlite') ? '(in Node)' : Math.round(m.database)} | ${Math.round(total)} | ${(total / (other.node + other.database)).toFixed(2)} |`;
  });
  return [
    '# Where a list page is built into JSON',
    '',
    `Measured by \`npm run bench:json\` on ${new Date().toISOString().slice(0, 10)} (Node ${process.version}, ${os.cpus().length} cores, load average at the end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}): the page statement of each list, ${PAGES} pages one after the other per block, ${ROUNDS} ` +
      `alternating blocks per way after a warm-up block, on the bundled data plus ${ISSUES} synthetic issues. ` +
      'No HTTP: the answer around the items is the same both ways. CPU in µs per page; on PGlite the database runs ' +
      "in this process's worker thread, so its CPU is in the Node column.",
    '',
    '| engine | list | where the JSON is built | pages/s, 1 client | Node CPU | PostgreSQL CPU | total CPU | total / SQL |',
    '|---|---|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
  ].join('\n');
}

await main();
