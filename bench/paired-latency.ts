// Paired sequential latency of two servers on the same database (a base checkout and this one): for each path, N
// rounds of one request to A then the same request to B, one at a time, so both see the same (shared, loaded) machine;
// prints min / p50 / p99 ms of each and the ratio of the p50s, as a Markdown row. `{i}` in a path is the round number
// (a filter never asked before each round).
//   API_KEY=… npx tsx bench/paired-latency.ts http://127.0.0.1:19502 http://127.0.0.1:19501 100 '/api/v0/contribute/?limit=100'
import { performance } from 'node:perf_hooks';

const [a = '', b = '', n = '100', ...paths] = process.argv.slice(2);
const headers = { 'x-api-key': process.env.API_KEY ?? '' };

async function one(base: string, path: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(base + path, { headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${base}${path}: ${res.status}`);
  return performance.now() - started;
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((x, y) => x - y);
  const q = (x: number) => sorted[Math.min(sorted.length - 1, Math.floor(x * sorted.length))];
  return { min: sorted[0]!, p50: q(0.5)!, p99: q(0.99)! };
}

const ms = (x: number) => x.toFixed(1);
for (const path of paths) {
  const first: number[] = [];
  const second: number[] = [];
  for (let i = -3; i < Number(n); i++) {
    const p = path.replaceAll('{i}', String(i + 3));
    const x = await one(a, p);
    const y = await one(b, p);
    if (i >= 0) {
      first.push(x);
      second.push(y);
    }
  }
  const [sa, sb] = [stats(first), stats(second)];
  console.log(
    `| \`${path}\` | ${first.length} | ${ms(sa.min)} / ${ms(sa.p50)} / ${ms(sa.p99)} | ` +
      `${ms(sb.min)} / ${ms(sb.p50)} / ${ms(sb.p99)} | ${(sa.p50 / sb.p50).toFixed(1)}× |`,
  );
}
