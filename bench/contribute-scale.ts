// GET /api/v0/contribute/ at scale (issue 47, item 6), a phase of `npm run bench:scale` (ONLY=contribute): on the
// generated million issues, adds what the list reads and the generator does not write:
//   - 300 projects (four levels), each naming the repositories whose id is a multiple of 50 in its share (2,000 of the
//     100,000; one in twenty of them archived), the first also org-0/big (its 56k issues);
//   - three labels per repository (`good first issue`, `help wanted`, `bug`), on 8 %, 4 % and 30 % of the issues;
//   - an assignee on 20 % of the issues.
// Then, with the response cache off (every request routed, authenticated, queried and rendered), one client:
//   - the first page, the same request again (its total counted once, then remembered as every list's is);
//   - a different filter each request (a project key, or a language and a level never asked before): the total
//     counted each time, the "uncached" figure, goal p99 ≤ 50 ms;
//   - the page after the first through its cursor, and `label=bug`.
import { performance } from 'node:perf_hooks';
import pg from 'pg';

const PROJECTS = 300;
const REQUESTS = Number(process.env.CONTRIBUTE_REQUESTS ?? 200);
const LANGUAGES = ['Python', 'JavaScript', 'Go', 'Java', 'Rust', 'TypeScript'];
const LEVELS = ['flagship', 'production', 'lab', 'incubator'];

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const ms = (x: number) => x.toFixed(1);
const chance = (column: string, seed: number) =>
  `((hashint8extended(${column}, ${seed}) & 2147483647)::float8 / 2147483648)`;

async function seedContribute(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const step = async (label: string, text: string) => {
    const started = performance.now();
    await client.query(text);
    console.error(`  ${label}: ${ms((performance.now() - started) / 1000)} s`);
  };
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM projects WHERE key LIKE 'bench-project-%'`,
    );
    if (Number(rows[0]!.n) > 0) return;
    await step(
      `${PROJECTS} projects`,
      `INSERT INTO projects (key, name, level, is_active, repository_paths, created_at, updated_at)
       SELECT 'bench-project-' || k, 'Bench project ' || k, (ARRAY['flagship','production','lab','incubator'])[1 + k % 4],
              true, paths, timestamptz '2015-01-01' + k * interval '1 day', timestamptz '2024-01-01'
       FROM (SELECT k, jsonb_agg(path) AS paths
             FROM (SELECT CASE WHEN owner_login = 'org-0' AND name = 'big' THEN 0 ELSE (id / 50) % ${PROJECTS} END AS k,
                          lower(owner_login || '/' || name) AS path
                   FROM repositories WHERE id % 50 = 0 OR (owner_login = 'org-0' AND name = 'big')) AS s
             GROUP BY k) AS g`,
    );
    await step(
      'archived: one in twenty of the projects’ repositories',
      `UPDATE repositories SET is_archived = true WHERE id % 50 = 0 AND (id / 50) % 20 = 7`,
    );
    await step(
      'labels: three per repository',
      `INSERT INTO labels (github_id, repository_id, name, color)
       SELECT 600000000 + r.id * 3 + j, r.id, (ARRAY['good first issue', 'help wanted', 'bug'])[j + 1], 'ededed'
       FROM repositories r, generate_series(0, 2) AS j`,
    );
    await step(
      'issue labels: 8 %, 4 %, 30 %',
      `INSERT INTO issue_labels (issue_id, label_id)
       SELECT i.id, l.id FROM issues i JOIN labels l ON l.repository_id = i.repository_id
       WHERE (l.name = 'good first issue' AND ${chance('i.id', 201)} < 0.08)
          OR (l.name = 'help wanted' AND ${chance('i.id', 202)} < 0.04)
          OR (l.name = 'bug' AND ${chance('i.id', 203)} < 0.3)`,
    );
    await step(
      'assignees: 20 %',
      `INSERT INTO issue_assignees (issue_id, member_id)
       SELECT i.id, (SELECT min(id) FROM members) + (i.id % 1000) FROM issues i WHERE ${chance('i.id', 204)} < 0.2`,
    );
    await step(
      'VACUUM ANALYZE',
      'VACUUM ANALYZE projects, repositories, labels, issue_labels, issue_assignees, issues',
    );
  } finally {
    await client.end();
  }
}

async function time(base: string, key: string, pathOf: (i: number) => string, n: number, warmUp = 3) {
  const samples: number[] = [];
  let first = NaN;
  for (let i = -warmUp; i < n; i++) {
    const path = pathOf(i);
    const started = performance.now();
    const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
    await res.arrayBuffer();
    const elapsed = performance.now() - started;
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    if (i === -warmUp) first = elapsed;
    if (i >= 0) samples.push(elapsed);
  }
  const sorted = samples.sort((a, b) => a - b);
  return { first, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), n };
}

export async function contributeScalePhase(base: string, key: string, url: string, issues: number): Promise<void> {
  await seedContribute(url);
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': key } });
    return { body: (await res.json()) as { count: number }, link: res.headers.get('link') ?? '' };
  };
  const whole = await get('/api/v0/contribute/?limit=100');
  const next = /<[^>]*(\/api\/v0\/contribute\/[^>]*)>; rel="next"/.exec(whole.link)?.[1];
  console.log(`\n## Contribute (issue 47): \`/api/v0/contribute/\`\n`);
  console.log(
    `One client, one request after the other, the response cache off. ${issues.toLocaleString('en')} issues; ` +
      `${PROJECTS} projects naming 2,000 repositories (and org-0/big); ${whole.body.count.toLocaleString('en')} issues listed.\n`,
  );
  console.log('| request | requests | first ms | p50 ms | p99 ms | goal |');
  console.log('|---|---:|---:|---:|---:|---|');
  const row = (name: string, t: Awaited<ReturnType<typeof time>>, goal = '') =>
    console.log(`| ${name} | ${t.n} | ${ms(t.first)} | ${ms(t.p50)} | ${ms(t.p99)} | ${goal} |`);
  row(
    'first page: `/contribute/?limit=100` (its total counted once)',
    await time(base, key, () => '/api/v0/contribute/?limit=100', REQUESTS),
  );
  // Each request a filter set never asked before: the page and its total both computed.
  const projects = Math.min(REQUESTS, PROJECTS - 3);
  row(
    'uncached: a project never asked before each request: `/contribute/?project=bench-project-N`',
    await time(base, key, (i) => `/api/v0/contribute/?project=bench-project-${i + 3}&limit=100`, projects),
    'p99 ≤ 50 ms',
  );
  const combos = LANGUAGES.flatMap((language) => LEVELS.map((level) => `language=${language}&level=${level}`));
  row(
    'uncached: a language and a level never asked before: `/contribute/?language=L&level=V`',
    await time(base, key, (i) => `/api/v0/contribute/?${combos[i + 3]}&limit=100`, combos.length - 3),
    'p99 ≤ 50 ms',
  );
  row(
    'uncached: also labelled `bug`, a project never asked before: `/contribute/?label=bug&project=bench-project-N`',
    await time(
      base,
      key,
      (i) => `/api/v0/contribute/?label=bug&project=bench-project-${PROJECTS - 1 - (i + 3)}&limit=100`,
      projects,
    ),
    'p99 ≤ 50 ms',
  );
  if (next) row('the next page through its cursor', await time(base, key, () => next, REQUESTS));
}
