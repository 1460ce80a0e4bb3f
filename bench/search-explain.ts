// EXPLAIN (ANALYZE, BUFFERS) of the search's two statements (src/api/v0/search/search.queries.ts) for one query, as the
// app sends them, on a database of the caller's (a kept bench:scale database, for example):
//   URL=postgres://postgres@127.0.0.1:5432/cds_scale_<hex> Q='login error' npx tsx bench/search-explain.ts
// It runs the search three times first (timed: a cold run, then warm ones), then explains the last run's statements.
import type { CompiledQuery } from 'kysely';
import { openDatabase } from '../src/db/index.ts';
import { searchRecords, SEARCH_RESOURCES } from '../src/api/v0/search/search.queries.ts';

const url = process.env.URL;
if (!url) throw new Error('URL=postgres://… (the database to search) is required');
const q = process.env.Q ?? 'login error';
const captured: CompiledQuery[] = [];
const database = await openDatabase({
  databaseUrl: url,
  log: (event) => {
    if (event.level === 'query') captured.push(event.query);
  },
});
try {
  for (let run = 0; run < 3; run++) {
    const started = performance.now();
    await searchRecords(database.db, q, SEARCH_RESOURCES, 10, 0);
    console.log(`run ${run + 1}: ${(performance.now() - started).toFixed(1)} ms`);
  }
  const last = (marker: string) => captured.filter((c) => c.sql.includes(marker)).pop()!;
  for (const statement of [last('search_words'), last('WITH page AS')]) {
    const explained = { ...statement, sql: `EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}` } as CompiledQuery;
    const { rows } = await database.db.executeQuery(explained);
    console.log((rows as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']).join('\n'), '\n');
  }
} finally {
  await database.close();
}
