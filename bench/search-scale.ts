// The ranked search (GET /api/v0/search/, issue 26) in bench:scale: word-based synthetic text for the generated
// rows (bench/scale.ts's seed takes its SQL expressions from here), and the measurement of 2–3-word queries, half of
// them with a typo, through HTTP on the real server (response cache off), on PostgreSQL at scale and on PGlite with
// the bundled data. Results: bench/SEARCH.md.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { importDataset, analyze } from '../src/data/import/dataset.import.ts';
import { openDatabase } from '../src/db/index.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

const SEARCH_WARM_UP = Number(process.env.SEARCH_WARM_UP ?? 5);
const SEARCH_ITERATIONS = Number(process.env.SEARCH_ITERATIONS ?? 40);

// ---------------------------------------------------------------- vocabulary

/** A comma-separated list of words (a word may hold a space: "Clean up", "de Vries"). */
const list = (text: string): readonly string[] =>
  text
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);

// Words of issue titles and repository names, most frequent first: a pick takes rank ⌊N·r²⌋ for a uniform r, so the
// first words are in a few percent of the picks (a "common word" query matches tens of thousands of issues) and the
// last ones in a few hundredths of a percent (a rare pair matches a handful).
export const NOUNS = list(`
  error, page, test, login, user, file, api, config, build, request, token, server, docs, password,
  session, form, button, data, release, dependency, update, check, image, memory, query, cache, input,
  output, report, scan, endpoint, header, cookie, database, link, search, upload, download, message,
  response, module, package, plugin, version, support, issue, option, setting, path, parser, template,
  account, profile, email, certificate, permission, role, policy, rule, scanner, container, docker,
  cluster, deployment, pipeline, workflow, action, script, command, client, proxy, router, handler,
  event, hook, webhook, callback, timeout, retry, connection, socket, stream, buffer, queue, worker,
  thread, process, schema, migration, table, column, index, field, value, type, string, number, date,
  time, zone, locale, language, translation, label, title, description, comment, review, branch, commit,
  merge, conflict, tag, artifact, binary, library, framework, component, widget, dialog, modal, menu,
  sidebar, footer, navbar, layout, style, theme, icon, font, color, screen, mobile, browser, extension,
  window, tab, console, terminal, shell, kernel, driver, network, firewall, gateway, domain,
  authorization, redirect, payload, injection, vulnerability, exploit, attack, threat, audit, compliance,
  encryption, signature, secret, vault, credential, identity, oauth, saml, jwt, csrf, xss, sqli,
  sanitizer, validator, encoder, decoder, serializer, crawler, spider, fuzzer, benchmark, metric,
  dashboard, chart, graph, node, edge, tree, list, array, map, filter, sort, pagination, limit, quota,
  billing, invoice, payment, order, cart, checkout, product, catalog, inventory, shipment, notification,
  alert, monitor, logger, trace, span, profiler, debugger, compiler, interpreter, runtime, sandbox,
  emulator, simulator, installer, updater, launcher, scheduler, backup, restore, snapshot, archive,
  export, import, sync, mirror, replica, shard, tenant, organization, team, member, group, invitation,
  onboarding, tutorial, workshop, sample, playground, kubernetes, terraform, ansible, helm, nginx,
  apache, postgres, redis, kafka
`);

export const VERBS = list(`
  Fix, Add, Update, Remove, Improve, Support, Refactor, Handle, Allow, Document, Validate, Migrate,
  Rename, Replace, Upgrade, Move, Clean up, Optimize, Cache, Expose, Disable, Enable, Deprecate, Split,
  Merge, Test, Log, Sanitize, Escape, Encrypt
`);

export const PROBLEMS = list(`
  crash, leak, failure, regression, warning, exception, bug, panic, deadlock, overflow, mismatch, typo,
  slowdown, flake, hang, corruption, bypass, race, loop, misconfiguration
`);

export const CONNECTORS = ['in', 'on', 'when', 'for', 'with', 'after', 'during', 'from', 'without', 'under'];

export const ADJECTIVES = list(`
  secure, simple, fast, lightweight, modern, open, minimal, scalable, portable, extensible, automated,
  static, dynamic, interactive, distributed, embedded, async, typed, declarative, native
`);

export const FIRST_NAMES = list(`
  James, Mary, John, Patricia, Robert, Jennifer, Michael, Linda, David, Elizabeth, William, Barbara,
  Richard, Susan, Joseph, Jessica, Thomas, Sarah, Charles, Karen, Daniel, Nancy, Matthew, Lisa, Anthony,
  Betty, Mark, Sandra, Steven, Ashley, Andrew, Emily, Paul, Donna, Joshua, Michelle, Kevin, Carol, Brian,
  Amanda, Wei, Li, Hiroshi, Yuki, Priya, Rahul, Ananya, Arjun, Fatima, Omar, Ahmed, Aisha, Carlos, Maria,
  José, Lucía, Pedro, Ana, João, Beatriz, Lukas, Anna, Jonas, Lena, Pierre, Camille, Léa, Hugo, Giulia,
  Marco, Sven, Ingrid, Olga, Dmitri, Ivan, Natalia, Kwame, Amara, Chinedu, Zanele
`);

export const LAST_NAMES = list(`
  Smith, Johnson, Williams, Brown, Jones, Garcia, Miller, Davis, Rodriguez, Martinez, Hernandez, Lopez,
  Gonzalez, Wilson, Anderson, Thomas, Taylor, Moore, Jackson, Martin, Lee, Perez, Thompson, White,
  Harris, Sanchez, Clark, Ramirez, Lewis, Robinson, Walker, Young, Allen, King, Wright, Scott, Torres,
  Nguyen, Hill, Flores, Green, Adams, Nelson, Baker, Hall, Rivera, Campbell, Mitchell, Carter, Roberts,
  Chen, Wang, Zhang, Liu, Yang, Huang, Zhao, Wu, Zhou, Xu, Tanaka, Suzuki, Takahashi, Watanabe, Sato,
  Kim, Park, Choi, Patel, Sharma, Singh, Kumar, Gupta, Khan, Ali, Hassan, Ibrahim, Okafor, Mensah,
  Dlamini, Müller, Schmidt, Schneider, Fischer, Weber, Meyer, Wagner, Becker, Schulz, Hoffmann, Dubois,
  Durand, Lefèvre, Moreau, Rossi, Russo, Ferrari, Esposito, Bianchi, Romano, Silva, Santos, Oliveira,
  Souza, Costa, Pereira, Ivanov, Petrov, Kowalski, Nowak, Jansen, de Vries, van Dijk, Bakker, Larsen,
  Nielsen, Hansen, Andersson, Johansson, Virtanen
`);

const array = (list: readonly string[]) => `(ARRAY[${list.map((w) => `'${w.replaceAll("'", "''")}'`).join(',')}])`;

/** SQL of a uniform number in [0, 1) for a seed: bench/scale.ts's `hash` over the row number `g`. */
export type Random = (seed: number) => string;

/** A word of `list` by rank ⌊N·r^skew⌋: skew 1 is uniform, 2 a long tail after a few frequent words. */
const pick = (list: readonly string[], random: Random, seed: number, skew = 2) =>
  `${array(list)}[1 + floor(power(${random(seed)}, ${skew}) * ${list.length})::int]`;

/** An issue title: "Fix login error when session timeout", "Add docs for token cache". */
export function issueTitle(random: Random): string {
  const noun = (seed: number) => pick(NOUNS, random, seed);
  return `(CASE WHEN ${random(40)} < 0.6
      THEN ${pick(VERBS, random, 41)} || ' ' || ${noun(42)} || ' ' || ${noun(43)} || ' ' || ${pick(CONNECTORS, random, 44, 1)} || ' ' || ${noun(45)}
      ELSE initcap(${noun(46)}) || ' ' || ${noun(47)} || ' ' || ${pick(PROBLEMS, random, 48)} || CASE WHEN ${random(49)} < 0.5 THEN ' ' || ${pick(CONNECTORS, random, 50, 1)} || ' ' || ${noun(51)} ELSE '' END
    END)`;
}

/** An issue body: a short report that names a few more words (the full-text match reads it at weight B). */
export function issueBody(random: Random): string {
  const noun = (seed: number) => pick(NOUNS, random, seed);
  return `('Steps to reproduce: open the ' || ${noun(52)} || ' ' || ${noun(53)} || ' and ' || lower(${pick(VERBS, random, 54)}) || ' the ' || ${noun(55)} || '. Expected the ' || ${noun(56)} || ' to work; got a ' || ${pick(PROBLEMS, random, 57)} || ' instead.')`;
}

/** A repository name before de-duplication per owner: "token-cache", "secure-login-scanner". */
export function repositoryName(random: Random): string {
  const noun = (seed: number) => pick(NOUNS, random, seed);
  return `(CASE WHEN ${random(60)} < 0.3 THEN ${pick(ADJECTIVES, random, 61, 1.5)} || '-' ELSE '' END || ${noun(62)} || '-' || ${noun(63)})`;
}

/** A repository description: "A fast token cache for docker deployment". */
export function repositoryDescription(random: Random): string {
  const noun = (seed: number) => pick(NOUNS, random, seed);
  return `('A ' || ${pick(ADJECTIVES, random, 64, 1)} || ' ' || ${noun(65)} || ' ' || ${noun(66)} || ' for ' || ${noun(67)} || ' ' || ${noun(68)})`;
}

/** An organization's name: "Token Labs", "Webhook Foundation". */
export function organizationName(random: Random): string {
  return `initcap(${pick(NOUNS, random, 78, 1)}) || ' ' || ${array(['Labs', 'Foundation', 'Project', 'Team', 'Collective', 'Security'])}[1 + floor(${random(79)} * 6)::int]`;
}

/** A member's first and last name (two columns of the subquery): "Maria Chen". */
export function memberNameParts(random: Random): { first: string; last: string } {
  return { first: pick(FIRST_NAMES, random, 70, 1.5), last: pick(LAST_NAMES, random, 71, 1.5) };
}

/** A member's login before de-duplication, from the name parts' SQL: "mchen", "maria-chen", "chen92". */
export function memberLogin(first: string, last: string, random: Random): string {
  const plain = (e: string) => `regexp_replace(lower(cds_unaccent(${e})), '[^a-z0-9]+', '', 'g')`;
  return `(CASE WHEN ${random(72)} < 0.4 THEN left(${plain(first)}, 1) || ${plain(last)}
    WHEN ${random(72)} < 0.7 THEN ${plain(first)} || '-' || ${plain(last)}
    ELSE ${plain(last)} || floor(${random(73)} * 100)::int END)`;
}

/** A member's bio: "Security engineer, docker and token", or none. */
export function memberBio(random: Random): string {
  return `(CASE WHEN ${random(74)} < 0.5 THEN initcap(${pick(NOUNS, random, 75)}) || ' engineer, ' || ${pick(NOUNS, random, 76)} || ' and ' || ${pick(NOUNS, random, 77)} ELSE '' END)`;
}

// ---------------------------------------------------------------- queries

export interface SearchCase {
  q: string;
  /** The same query without its typo, or undefined for a query written right. */
  typoOf?: string;
  /** What it stands for in the table. */
  note: string;
}

/** A query written right, then the same with one edit (`typo`), as the two rows the table pairs. */
const withTypo = (q: string, note: string, typo: string, typoNote: string): SearchCase[] => [
  { q, note },
  { q: typo, typoOf: q, note: typoNote },
];

/** 2–3-word queries over the synthetic data; every second one is the one before with one edit in a word of ≥ 4 letters. */
export const SCALE_QUERIES: SearchCase[] = [
  ...withTypo('login error', 'two of the commonest nouns', 'logn error', 'deletion'),
  ...withTypo('session timeout crash', 'mid-frequency words', 'session timout crash', 'deletion'),
  ...withTypo('memory leak parser', 'mid-frequency, a problem word', 'memory leek parser', 'substitution'),
  ...withTypo('webhook retry', 'less frequent nouns', 'webhok retry', 'deletion'),
  ...withTypo('kafka shipment', 'two rare nouns', 'kafka shipmemt', 'substitution'),
  ...withTypo('maria chen', 'a member name', 'marja chen', 'substitution in the first name'),
];

/** 2–3-word queries over the bundled OWASP data (chapters, projects, committees, events, sponsors). */
export const BUNDLED_QUERIES: SearchCase[] = [
  ...withTypo('application security', 'common words', 'aplication security', 'deletion'),
  ...withTypo('juice shop', 'a project', 'juise shop', 'substitution'),
  ...withTypo('security testing guide', 'three common words', 'security tesing guide', 'deletion in the middle word'),
  ...withTypo('threat modeling', 'a project and events', 'threat modelling', 'insertion (British spelling)'),
  ...withTypo('san francisco', 'a chapter', 'san fransisco', 'substitution'),
  ...withTypo('mobile security', 'a project and chapters', 'mobile securty', 'deletion'),
];

// ---------------------------------------------------------------- measuring

const ms = (x: number) => x.toFixed(1);
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

interface SearchTiming {
  p50: number;
  p95: number;
  max: number;
  count: number;
  top: string;
  samples: number[];
}

async function timeSearch(base: string, headers: Record<string, string>, c: SearchCase): Promise<SearchTiming> {
  const url = `${base}/api/v0/search/?${new URLSearchParams({ q: c.q }).toString()}`;
  let body: { count: number; items: { resource: string; name: string }[] } | undefined;
  const get = async () => {
    const res = await fetch(url, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text.slice(0, 300)}`);
    if (res.headers.get('x-cache')?.toLowerCase() === 'hit') throw new Error(`${url}: answered from the cache`);
    return text;
  };
  for (let i = 0; i < SEARCH_WARM_UP; i++) body = JSON.parse(await get()) as typeof body;
  const samples: number[] = [];
  for (let i = 0; i < SEARCH_ITERATIONS; i++) {
    const started = performance.now();
    await get();
    samples.push(performance.now() - started);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const first = body?.items[0];
  return {
    p50: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    max: sorted[sorted.length - 1] ?? NaN,
    count: body?.count ?? 0,
    top: first ? `${first.resource}: ${first.name}` : '—',
    samples,
  };
}

/** Rows each query's words match by full text (every word as a prefix), per table: how much the query has to rank. */
export type MatchCounter = (q: string) => Promise<string>;

async function report(
  label: string,
  base: string,
  headers: Record<string, string>,
  cases: SearchCase[],
  matches?: MatchCounter,
): Promise<void> {
  console.log(`\n## Search: ${label}\n`);
  console.log(
    `One client, one request after the other, response cache off: ${SEARCH_WARM_UP} warm-up then ${SEARCH_ITERATIONS} timed requests per query; load average before: ${load()}\n`,
  );
  console.log(
    `| q | typo | HTTP p50 ms | HTTP p95 ms | max ms | results (≤ 500) | first result |${matches ? ' full-text matches |' : ''}`,
  );
  console.log(`|---|---|---:|---:|---:|---:|---|${matches ? '---|' : ''}`);
  const all: number[] = [];
  const typo: number[] = [];
  const plain: number[] = [];
  for (const c of cases) {
    const t = await timeSearch(base, headers, c);
    all.push(...t.samples);
    (c.typoOf ? typo : plain).push(...t.samples);
    const extra = matches ? ` ${await matches(c.q)} |` : '';
    console.log(
      `| \`${c.q}\` | ${c.typoOf ? `yes (${c.note})` : ''} | ${ms(t.p50)} | ${ms(t.p95)} | ${ms(t.max)} | ${t.count} | ${t.top.replaceAll('|', '\\|').slice(0, 60)} |${extra}`,
    );
  }
  const line = (name: string, samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b);
    console.log(
      `| ${name} | | **${ms(quantile(sorted, 0.5))}** | **${ms(quantile(sorted, 0.95))}** | ${ms(sorted.at(-1) ?? NaN)} | | |${matches ? ' |' : ''}`,
    );
  };
  line('all queries', all);
  line('written right', plain);
  line('with a typo', typo);
  console.log(`\nLoad average after: ${load()}`);
}

/** The PostgreSQL part: the server at `base` (response cache off) on the generated database at `url`. */
export async function searchScalePhase(base: string, key: string, url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table: string; n: string }>(`
      SELECT 'issues' AS table, count(*)::text AS n FROM issues UNION ALL
      SELECT 'repositories', count(*)::text FROM repositories UNION ALL SELECT 'members', count(*)::text FROM members`);
    const sample = (await client.query<{ title: string }>(`SELECT title FROM issues ORDER BY id LIMIT 3`)).rows.map(
      (r) => r.title,
    );
    console.log(
      `\n# search over ${rows.map((r) => `${r.n} ${r.table}`).join(', ')}; issue titles like ${sample.map((s) => `"${s}"`).join(', ')}`,
    );
    // Issues, repositories and members whose full-text vector matches every word of the query as written.
    const matches: MatchCounter = async (q) => {
      const words = q.split(/\s+/).filter(Boolean);
      const tsq = words.map((w) => `to_tsquery('simple', '${w.replaceAll("'", "''")}:*')`).join(' && ');
      const counts = await client.query<{ issues: string; repositories: string; members: string }>(`
        SELECT (SELECT count(*) FROM issues WHERE search_vector @@ (${tsq})) AS issues,
               (SELECT count(*) FROM repositories WHERE search_vector @@ (${tsq})) AS repositories,
               (SELECT count(*) FROM members WHERE search_vector @@ (${tsq})) AS members`);
      const r = counts.rows[0]!;
      return `${r.issues} / ${r.repositories} / ${r.members}`;
    };
    await report(
      'PostgreSQL, generated data (full-text matches: issues / repositories / members)',
      base,
      { 'x-api-key': key },
      SCALE_QUERIES,
      matches,
    );
  } finally {
    await client.end();
  }
}

/** The PGlite part: an in-memory PGlite with the bundled data imported, the real app listening on a free port. */
export async function searchPgliteBundled(): Promise<void> {
  const database = await openDatabase({ dataDir: 'memory://' });
  const version = (await sql<{ v: string }>`select current_setting('server_version') as v`.execute(database.db))
    .rows[0]!.v;
  await migrateToLatest(database.db);
  const started = performance.now();
  await importDataset(database.db);
  await analyze(database.db);
  const counts = (
    await sql<{ table: string; n: number }>`
      SELECT 'chapters' AS table, count(*)::int AS n FROM chapters UNION ALL SELECT 'projects', count(*)::int FROM projects
      UNION ALL SELECT 'committees', count(*)::int FROM committees UNION ALL SELECT 'events', count(*)::int FROM events
      UNION ALL SELECT 'sponsors', count(*)::int FROM sponsors UNION ALL SELECT 'repositories', count(*)::int FROM repositories
      UNION ALL SELECT 'issues', count(*)::int FROM issues`.execute(database.db)
  ).rows;
  console.log(
    `\n# PGlite (PostgreSQL ${version}, in memory): bundled data imported and analyzed in ${ms((performance.now() - started) / 1000)} s: ${counts.map((c) => `${c.n} ${c.table}`).join(', ')}`,
  );
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    REST_AUTH: 'optional',
    RATE_LIMIT_PER_SECOND: '1000000',
    RESPONSE_CACHE: 'false',
  });
  const app = await buildApp({ config, database });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    await report(
      'PGlite, bundled data (the app listening in this process)',
      `http://127.0.0.1:${port}`,
      {},
      BUNDLED_QUERIES,
    );
  } finally {
    await app.close();
    await database.close();
  }
}
