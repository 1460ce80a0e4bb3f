// Structured search on 100,000 repositories: median and p95 of representative `q` values through the
// real app (app.inject, response cache cleared before each request), of the SQL the app sent for them
// replayed alone (all statements of a request, concurrently as fetchPage sends them), and of one
// statement that counts in a scalar subquery instead, for comparison; then EXPLAIN (ANALYZE, BUFFERS)
// of the slowest and of a typical query. Results: bench/SEARCH.md.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/search.ts
//
// With DATABASE_URL it works in a temporary database on that server, dropped at the end; without it,
// in an in-memory PGlite. Optional: ROWS (100000), ITERATIONS (60), PLANS=all, KEEP=1 (keep the database).
import crypto from 'node:crypto';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { CompiledQuery, Kysely, sql, type LogEvent, type SelectQueryBuilder } from 'kysely';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/index.ts';
import { adminQuery, serverUrl } from '../test/helpers.ts';
import type { DB } from '../src/db/schema.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { filterRepositories } from '../src/api/v0/repositories/repositories.queries.ts';

const ROWS = Number(process.env.ROWS ?? 100_000);
const ITERATIONS = Number(process.env.ITERATIONS ?? 60);
const WARM_UP = 5;
const LIMIT = 100;

/** The SQL the app sends for one request of the repositories list, captured through Kysely's log while `capturing`. */
let capturing = false;
const captured: CompiledQuery[] = [];
const log = (event: LogEvent) => {
  if (capturing && event.level === 'query' && /from "repositories"/.test(event.query.sql)) captured.push(event.query);
};

type BenchDatabase = Database & { label: string; drop(): Promise<void> };

/** A database the bench owns: a fresh one on the server, or an in-memory PGlite, with Kysely's log on. */
async function openBenchDatabase(): Promise<BenchDatabase> {
  const name = serverUrl ? `cds_bench_${crypto.randomBytes(6).toString('hex')}` : undefined;
  let databaseUrl: string | undefined;
  if (name) {
    await adminQuery(`CREATE DATABASE ${name}`);
    databaseUrl = Object.assign(new URL(serverUrl!), { pathname: `/${name}` }).toString();
  }
  const database = await openDatabase({ databaseUrl, dataDir: 'memory://', log });
  const version = (await sql<{ v: string }>`select current_setting('server_version') as v`.execute(database.db))
    .rows[0]!.v;
  const label = database.kind === 'postgres' ? `PostgreSQL ${version}` : `PGlite (PostgreSQL ${version})`;
  return {
    ...database,
    label,
    async drop() {
      await database.close();
      if (name) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

// ---------------------------------------------------------------- data

// Deterministic pseudo-random numbers in [0, 1) from the row number and a seed: every run has the same data.
const rand = (seed: number) => `((hashint4extended(i, ${seed}) & 2147483647)::float8 / 2147483648)`;
const array = (words: readonly string[]) => `(ARRAY[${words.map((w) => `'${w}'`).join(',')}])`;
const pick = (words: readonly string[], seed: number) =>
  `${array(words)}[1 + floor(${rand(seed)} * ${words.length})::int]`;

const FIRST = [
  'owasp',
  'secure',
  'fast',
  'tiny',
  'open',
  'web',
  'cloud',
  'data',
  'smart',
  'simple',
  'react',
  'node',
  'go',
  'py',
  'rust',
  'awesome',
  'docker',
  'kube',
  'micro',
  'auth',
  'crypto',
  'vuln',
  'threat',
  'api',
  'mobile',
  'code',
  'dev',
  'net',
  'log',
  'test',
  'json',
  'graph',
  'deep',
  'static',
  'dynamic',
  'zero',
  'hyper',
  'meta',
  'flex',
  'quick',
];
const SECOND = [
  'scanner',
  'nest',
  'zap',
  'toolkit',
  'server',
  'client',
  'parser',
  'proxy',
  'router',
  'bot',
  'engine',
  'agent',
  'dashboard',
  'cli',
  'library',
  'framework',
  'plugin',
  'template',
  'checker',
  'analyzer',
  'fuzzer',
  'guard',
  'shield',
  'vault',
  'monitor',
  'tracker',
  'wiki',
  'notes',
  'config',
  'dotfiles',
  'examples',
  'workshop',
  'benchmark',
  'lab',
  'demo',
  'sdk',
  'app',
  'site',
  'game',
  'utils',
];
const SUFFIX = ['', '', '', '', '-api', '-cli', '-sdk', '.js', '-py', '-docs', '-action', '-go'];
// Roughly GitHub's mix; one slot is 2 %.
const LANGUAGES = [
  ...Array<string>(9).fill('JavaScript'),
  ...Array<string>(8).fill('Python'),
  ...Array<string>(5).fill('TypeScript'),
  ...Array<string>(5).fill('Java'),
  ...Array<string>(6).fill(''),
  ...Array<string>(3).fill('Go'),
  ...Array<string>(2).fill('C++'),
  ...Array<string>(2).fill('PHP'),
  ...Array<string>(2).fill('C#'),
  ...Array<string>(2).fill('Shell'),
  'C',
  'Ruby',
  'Rust',
  'Kotlin',
  'Swift',
  'HTML',
];
const OWNERS = 2_000;
const ORGANIZATIONS = 200;

/** 100,000 repositories in one INSERT … SELECT over generate_series; names unique per owner by construction. */
async function seed(db: Kysely<DB>): Promise<void> {
  await sql`
    INSERT INTO organizations (github_id, login, created_at, updated_at)
    SELECT 90000000 + i, 'org-' || i, now(), now() FROM generate_series(0, ${sql.lit(ORGANIZATIONS - 1)}) AS s(i)`.execute(
    db,
  );
  // Per owner o, k = i / OWNERS is distinct, and so is the (first, second) pair it picks.
  const name = `${array(FIRST)}[1 + (k + o) % ${FIRST.length}] || '-' || ${array(SECOND)}[1 + (k / ${FIRST.length} + o * 7) % ${SECOND.length}] || ${pick(SUFFIX, 1)}`;
  await sql`
    INSERT INTO repositories (github_id, owner_login, organization_id, name, description, language, is_archived,
      stars_count, forks_count, contributors_count, commits_count, open_issues_count, created_at, updated_at)
    SELECT 10000000 + i,
      CASE WHEN o < ${sql.lit(ORGANIZATIONS)} THEN 'org-' || o ELSE 'user-' || o END,
      org.id,
      ${sql.raw(name)},
      'Repository number ' || i,
      ${sql.raw(pick(LANGUAGES, 2))},
      ${sql.raw(rand(3))} < 0.08,
      floor(exp(power(${sql.raw(rand(4))}, 3) * 11)) - 1,
      floor((exp(power(${sql.raw(rand(4))}, 3) * 11) - 1) * ${sql.raw(rand(5))} / 4),
      floor(exp(power(${sql.raw(rand(6))}, 2) * 6)) - 1,
      floor(exp(${sql.raw(rand(7))} * 9)),
      floor(${sql.raw(rand(8))} * 50),
      created,
      created + (timestamptz '2025-06-01' - created) * ${sql.raw(rand(10))}
    FROM (
      SELECT i, i % ${sql.lit(OWNERS)} AS o, i / ${sql.lit(OWNERS)} AS k,
        timestamptz '2008-01-01' + (timestamptz '2025-06-01' - timestamptz '2008-01-01') * ${sql.raw(rand(9))} AS created
      FROM generate_series(0, ${sql.lit(ROWS - 1)}) AS s(i)
    ) AS g
    LEFT JOIN organizations AS org ON org.github_id = 90000000 + o`.execute(db);
  // The steady state autovacuum would reach: statistics and the visibility map.
  await sql`VACUUM ANALYZE`.execute(db);
}

// ---------------------------------------------------------------- measuring

const DEFAULT_ORDER = sql`"repositories"."created_at" desc, "repositories"."updated_at" desc, "repositories"."id" desc`;

/** One statement for a page and its total: an uncorrelated scalar subquery counts (an InitPlan, run once). */
function subqueryCountPage<O>(query: SelectQueryBuilder<DB, 'repositories', O>, page: number): CompiledQuery {
  const total = query.clearSelect().select(sql<string>`count(*)`.as('n'));
  return query
    .select(sql<string>`(${total})`.as('__total'))
    .orderBy(DEFAULT_ORDER)
    .limit(LIMIT)
    .offset((page - 1) * LIMIT)
    .compile();
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

interface Timing {
  median: number;
  p95: number;
}

async function time(run: () => Promise<unknown>): Promise<Timing> {
  for (let i = 0; i < WARM_UP; i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = performance.now();
    await run();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { median: quantile(samples, 0.5), p95: quantile(samples, 0.95) };
}

interface Case {
  q: string;
  /** Other query parameters of the request. */
  also?: Record<string, string>;
}

interface Result extends Case {
  count: number;
  http: Timing;
  app: Timing;
  oneStatement: Timing;
  appSql: CompiledQuery[];
  oneStatementSql: CompiledQuery;
}

function cases(sample: { name: string; day: string }): Case[] {
  return [
    { q: '' },
    { q: 'nest' },
    { q: 'name:scanner' },
    { q: 'name:owasp' },
    { q: 'language:python stars:>100' },
    { q: 'language:kotlin' },
    { q: 'archived:false created_at>=2020-01-01' },
    { q: `name:"${sample.name}"` },
    { q: 'name:qzxv' },
    { q: 'name:secure-nest-api' },
    { q: 'stars:>=10000' },
    { q: 'forks:<5 contributors:>10' },
    { q: `updated_at:${sample.day}` },
    { q: 'language:"Rust" archived:true' },
    { q: 'created_at<2010-01-01 stars:>1000' },
    { q: 'py' },
    { q: 'name:100%' },
    { q: 'stars:>10', also: { organization_id: 'org-7' } },
    { q: 'language:python', also: { page: '30' } },
    // Hostile: the longest pattern, and many one-letter terms that match most names (no trigram to use).
    { q: 'a'.repeat(1000) },
    { q: 'e a o r s t i n c l u d m p k g h y b f w v z j q x' },
    { q: Array<string>(500).fill('e').join(' ') },
  ];
}

const ms = (x: number) => x.toFixed(1);
const clip = (line: string, max = 300) => (line.length > max ? `${line.slice(0, max)}… (${line.length} chars)` : line);
const label = ({ q, also }: Case) => {
  const text = q === '' ? '(no q)' : q.length > 50 ? `${q.slice(0, 14)}… (${q.length} chars)` : q;
  const extra = also ? ` + ${new URLSearchParams(also).toString()}` : '';
  return `\`${text.replaceAll('|', '\\|')}\`${extra}`;
};

async function explain(db: Kysely<DB>, query: CompiledQuery): Promise<string> {
  const plan = await db.executeQuery<{ 'QUERY PLAN': string }>(
    CompiledQuery.raw(`EXPLAIN (ANALYZE, BUFFERS) ${query.sql}`, [...query.parameters]),
  );
  const params = JSON.stringify(query.parameters.map((p) => (typeof p === 'string' ? clip(p, 40) : p)));
  return [
    clip(query.sql, 2000),
    `-- parameters: ${params}`,
    '',
    ...plan.rows.map((row) => clip(row['QUERY PLAN'])),
  ].join('\n');
}

async function run(database: BenchDatabase): Promise<void> {
  console.log(`# ${database.label}: ${ROWS} repositories, ${ITERATIONS} iterations after ${WARM_UP} warm-up`);
  console.log(
    `# ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  await migrateToLatest(database.db);
  const started = performance.now();
  await seed(database.db);
  console.log(`seeded and vacuumed in ${ms(performance.now() - started)} ms\n`);
  const sample = (
    await sql<{ name: string; day: string }>`
    SELECT name, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM repositories ORDER BY id OFFSET 4242 LIMIT 1`.execute(
      database.db,
    )
  ).rows[0]!;

  const config = loadConfig({ LOG_LEVEL: 'silent', REST_AUTH: 'optional', RATE_LIMIT_PER_SECOND: '1000000' });
  const app = await buildApp({ config, database });
  await app.ready();
  const results: Result[] = [];
  try {
    for (const c of cases(sample)) {
      const params = new URLSearchParams({ limit: String(LIMIT), ...(c.q ? { q: c.q } : {}), ...c.also });
      const url = `/api/v0/repositories/?${params.toString()}`;
      const inject = async () => {
        app.shared.cache.clear();
        const res = await app.inject({ method: 'GET', url });
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
        return res;
      };
      captured.length = 0;
      capturing = true;
      const body = (await inject()).json() as { count: number; items: { name: string }[] };
      capturing = false;
      const appSql = [...captured];
      const filters = { q: c.q || undefined, organization_id: c.also?.organization_id };
      const oneStatementSql = subqueryCountPage(filterRepositories(database.db, filters), Number(c.also?.page ?? 1));
      const check = await database.db.executeQuery<{ name: string; __total: string }>(oneStatementSql);
      const same = check.rows.map((r) => r.name).join('\n') === body.items.map((i) => i.name).join('\n');
      if (!same || (check.rows.length > 0 && Number(check.rows[0]!.__total) !== body.count)) {
        throw new Error(`${url}: the one-statement variant disagrees with the app`);
      }
      const http = await time(inject);
      const replay = await time(() => Promise.all(appSql.map((query) => database.db.executeQuery(query))));
      const oneStatement = await time(() => database.db.executeQuery(oneStatementSql));
      results.push({ ...c, count: body.count, http, app: replay, oneStatement, appSql, oneStatementSql });
    }
  } finally {
    await app.close();
  }

  console.log(`The app sends ${results[0]!.appSql.length} statement(s) per list request.\n`);
  console.log(
    '| q | matches | HTTP median | HTTP p95 | app SQL median | app SQL p95 | one statement median | one statement p95 |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const cells = [r.http, r.app, r.oneStatement].flatMap((t) => [ms(t.median), ms(t.p95)]);
    console.log(`| ${label(r)} | ${r.count} | ${cells.join(' | ')} |`);
  }
  const slowest = [...results].sort((a, b) => b.http.median - a.http.median)[0]!;
  const typical = results.find((r) => r.q === 'language:python stars:>100')!;
  for (const r of process.env.PLANS === 'all' ? results : [slowest, typical]) {
    for (const [i, query] of r.appSql.entries()) {
      console.log(
        `\n### ${label(r)}: statement ${i + 1} of the app\n\n\`\`\`\n${await explain(database.db, query)}\n\`\`\``,
      );
    }
    if (process.env.PLANS === 'all') {
      console.log(
        `\n### ${label(r)}: one statement\n\n\`\`\`\n${await explain(database.db, r.oneStatementSql)}\n\`\`\``,
      );
    }
  }
}

const database = await openBenchDatabase();
try {
  await run(database);
} finally {
  if (process.env.KEEP) console.log('\nKEEP is set: the database was not dropped.');
  else await database.drop();
}
