// The agents' list parameters at scale (issue 27), a phase of `npm run bench:scale` (ONLY=agents):
//   - `near`: the 10 nearest of 100,000 synthetic chapters (spread uniformly over the sphere) to a random point each
//     request, with and without a radius; goal p99 ≤ 10 ms;
//   - `group_by=state` over the 1M issues, the first request (counted) and then warm (the grouped counts cached as
//     totals are; the server runs with the response cache off, so every request is routed, authenticated and
//     rendered); goal p99 ≤ 50 ms warm. And `group_by=repository` (100,000 repositories), for the record.
// One client, one request after the other; p50/p99 in ms.
import { performance } from 'node:perf_hooks';
import pg from 'pg';

export const CHAPTERS = Number(process.env.CHAPTERS ?? 100_000);
const NEAR_REQUESTS = Number(process.env.NEAR_REQUESTS ?? 500);
const GROUP_REQUESTS = Number(process.env.GROUP_REQUESTS ?? 200);

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const ms = (x: number) => x.toFixed(2);

/** 100,000 active chapters placed uniformly on the sphere (a seeded hash, the same every run). */
async function seedChapters(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM chapters WHERE key LIKE 'bench-%'`);
    if (Number(rows[0]!.n) >= CHAPTERS) return;
    const started = performance.now();
    const u = (seed: number) => `((hashint4extended(g, ${seed}) & 2147483647)::float8 / 2147483648)`;
    await client.query(`
      INSERT INTO chapters (key, name, is_active, latitude, longitude, country, region, related_urls, contribution_data,
                            contribution_stats, created_at, updated_at)
      SELECT 'bench-' || g, 'OWASP Bench ' || g, true, degrees(asin(2 * ${u(101)} - 1)), 360 * ${u(102)} - 180,
             'Country ' || (g % 200), 'Region ' || (g % 7), '[]', '{}', '{}',
             timestamptz '2010-01-01' + g * interval '1 minute', timestamptz '2020-01-01' + g * interval '1 minute'
      FROM generate_series(1, ${CHAPTERS}) AS g`);
    await client.query('VACUUM ANALYZE chapters');
    console.error(`  ${CHAPTERS} chapters: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await client.end();
  }
}

async function time(base: string, key: string, pathOf: (i: number) => string, n: number) {
  const samples: number[] = [];
  let first = NaN;
  for (let i = -3; i < n; i++) {
    const path = pathOf(i);
    const started = performance.now();
    const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
    await res.arrayBuffer();
    const elapsed = performance.now() - started;
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    if (i === -3) first = elapsed;
    if (i >= 0) samples.push(elapsed);
  }
  const sorted = samples.sort((a, b) => a - b);
  return { first, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), n };
}

/** A random point per request, uniform on the sphere, from a fixed seed. */
function points(count: number): string[] {
  let state = 42;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count + 3 }, () => {
    const lat = (Math.asin(2 * random() - 1) * 180) / Math.PI;
    const lon = 360 * random() - 180;
    return `${lat.toFixed(4)},${lon.toFixed(4)}`;
  });
}

export async function agentsScalePhase(base: string, key: string, url: string, issues: number): Promise<void> {
  await seedChapters(url);
  const near = points(NEAR_REQUESTS);
  const at = (i: number) => near[i + 3]!;
  console.log(`\n## Agents (issue 27): near and group_by\n`);
  console.log(
    `One client, one request after the other; the response cache off (the grouped counts are cached as totals are). ${CHAPTERS.toLocaleString('en')} synthetic chapters, ${issues.toLocaleString('en')} issues.\n`,
  );
  console.log('| request | requests | first ms | p50 ms | p99 ms | goal |');
  console.log('|---|---:|---:|---:|---:|---|');
  const row = (name: string, t: Awaited<ReturnType<typeof time>>, goal: string) =>
    console.log(`| ${name} | ${t.n} | ${ms(t.first)} | ${ms(t.p50)} | ${ms(t.p99)} | ${goal} |`);
  // The baseline of the same run: a page of 10 chapters without `near` (a random page of the first thousand).
  row(
    'baseline: 10 chapters without `near`, a random page: `/chapters/?limit=10&page=N`',
    await time(base, key, (i) => `/api/v0/chapters/?limit=10&page=${1 + (((i + 3) * 7919) % 1000)}`, NEAR_REQUESTS),
    '',
  );
  row(
    '10 nearest chapters, a random point each: `/chapters/?near=LAT,LON&limit=10`',
    await time(base, key, (i) => `/api/v0/chapters/?near=${at(i)}&limit=10`, NEAR_REQUESTS),
    'p99 ≤ 10 ms',
  );
  row(
    'the same within 500 km: `&radius_km=500` (counted per point)',
    await time(base, key, (i) => `/api/v0/chapters/?near=${at(i)}&radius_km=500&limit=10`, NEAR_REQUESTS),
    '',
  );
  row(
    'the same, two fields: `&fields=key,distance_km`',
    await time(base, key, (i) => `/api/v0/chapters/?near=${at(i)}&limit=10&fields=key,distance_km`, NEAR_REQUESTS),
    '',
  );
  row(
    'issues by state: `/issues/?group_by=state` (first: counted; then warm)',
    await time(base, key, () => '/api/v0/issues/?group_by=state', GROUP_REQUESTS),
    'p99 ≤ 50 ms warm',
  );
  row(
    'issues by repository: `/issues/?group_by=repository` (100,000 groups)',
    await time(base, key, () => '/api/v0/issues/?group_by=repository', 20),
    '',
  );
  row(
    'chapters by country: `/chapters/?group_by=country`',
    await time(base, key, () => '/api/v0/chapters/?group_by=country', GROUP_REQUESTS),
    '',
  );
}
