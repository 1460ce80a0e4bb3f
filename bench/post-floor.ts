// `npm run bench:post-floor`: what a POST with a body costs Node's HTTP server against a GET, with no service at all
// (issue 46: the MCP endpoint is a POST, the REST detail it is compared with a GET). bench/bare-server.js answers the
// same prebuilt body and header fields four ways: to a GET, bare and with the POST's two header fields; to a POST of
// the MCP `get` message, read and parsed as src/mcp/mcp.early.ts reads it; and to that POST without its body read at
// all (BARE_POST_UNREAD=1: Node discards it). The four alternate for ROUNDS rounds (these machines drift by ±10 % from
// one minute to the next), each row wrk's requests per second and the server's CPU per request; the ratios are the
// rounds' medians. The last one is the floor of "MCP `get` ≥ 0.80 of the REST detail's requests/s" on this machine
// and this Node: no code of ours runs in it. Writes bench/POST-FLOOR.md.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMicros } from './cpu.ts';
import { MCP_GET, MCP_HEADERS, runLoad, startNode, stopChild, waitForServer, type LoadRequest } from './load.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const CONNECTIONS = 50;
/** The size of the MCP `get` answer of the chapter detail (bench/RESULTS.md: 892 bytes). */
const BODY_BYTES = 892;

interface Variant {
  name: string;
  request?: LoadRequest;
  /** Header fields of the request (the POST's: its content type and Accept). */
  headers: Record<string, string>;
  env: Record<string, string>;
}
const VARIANTS: Variant[] = [
  { name: 'GET', headers: {}, env: {} },
  { name: "GET with the POST's two header fields", headers: MCP_HEADERS, env: {} },
  { name: 'POST of the MCP message, body read and parsed', request: MCP_GET, headers: MCP_HEADERS, env: {} },
  {
    name: 'POST of the MCP message, body not read',
    request: MCP_GET,
    headers: MCP_HEADERS,
    env: { BARE_POST_UNREAD: '1' },
  },
];

interface Sample {
  rps: number;
  cpu: number;
}

async function measure(variant: Variant, file: string, port: number): Promise<Sample> {
  const server = startNode(['bench/bare-server.js', String(port), file], variant.env);
  try {
    const url = `http://127.0.0.1:${port}/`;
    await waitForServer(url);
    const headers = variant.headers;
    await runLoad(url, headers, CONNECTIONS, WARMUP, 0, variant.request);
    const before = await cpuMicros([server.pid!]);
    const result = await runLoad(url, headers, CONNECTIONS, SECONDS, 0, variant.request);
    const after = await cpuMicros([server.pid!]);
    if (result.non2xx > 0 || result.timeouts > 0) throw new Error(`${variant.name}: ${result.non2xx} errors`);
    return { rps: result.rps, cpu: (after - before) / Math.max(1, result.rps * SECONDS) };
  } finally {
    await stopChild(server);
  }
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fixed = (value: number, digits: number) => value.toFixed(digits);

async function main(): Promise<void> {
  const file = path.join(os.tmpdir(), `cds-post-floor-${process.pid}`);
  const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '' }] } });
  await fs.writeFile(file, answer.replace('"text":""', `"text":"${'x'.repeat(BODY_BYTES - answer.length)}"`));
  const loadBefore = os.loadavg();
  const samples = VARIANTS.map(() => [] as Sample[]);
  let port = 19_400;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, variant] of VARIANTS.entries()) {
        const sample = await measure(variant, file, ++port);
        samples[i]!.push(sample);
        console.error(
          `round ${round + 1}, ${variant.name}: ${Math.round(sample.rps)} req/s, ${fixed(sample.cpu, 1)} µs`,
        );
      }
    }
  } finally {
    await fs.rm(file, { force: true });
  }
  const loadAfter = os.loadavg();
  const get = samples[0]!;
  const lines = [
    '# A POST with a body against a GET, on bare node:http (`npm run bench:post-floor`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`bench/post-floor.ts\` on Node ${process.version}, ` +
      `${os.availableParallelism()} cores, wrk (2 threads, ${CONNECTIONS} connections, ${SECONDS} s after ${WARMUP} s unrecorded) on the same machine. ` +
      `Load average ${loadBefore.map((l) => fixed(l, 2)).join(', ')} before, ${loadAfter.map((l) => fixed(l, 2)).join(', ')} after. ` +
      `The server is bench/bare-server.js answering ${BODY_BYTES} bytes with its two own header fields; the POST is the MCP ` +
      '`get` message of `npm run bench` with its two header fields.',
    '',
    '| request | req/s per round | median req/s | against the GET (median of the rounds) | server CPU µs/request (median) | against the GET |',
    '|---|---|---:|---:|---:|---:|',
    ...VARIANTS.map((variant, i) => {
      const rows = samples[i]!;
      const ratios = rows.map((s, round) => s.rps / get[round]!.rps);
      const cpuRatios = rows.map((s, round) => s.cpu / get[round]!.cpu);
      return `| ${variant.name} | ${rows.map((s) => Math.round(s.rps)).join(', ')} | ${Math.round(median(rows.map((s) => s.rps)))} | ${fixed(median(ratios), 2)} | ${fixed(median(rows.map((s) => s.cpu)), 1)} | ${fixed(median(cpuRatios), 2)}× |`;
    }),
    '',
    "The last row runs no code of ours and does not read the body: it is what Node's HTTP server costs for a request",
    "with a body (its parser's body callbacks, the request stream's push and end, the discarding of what was not read).",
    "An MCP `tools/call` is a POST, so on this server its requests per second cannot exceed that fraction of a GET's.",
    '',
  ];
  await fs.writeFile(path.join(ROOT, 'bench/POST-FLOOR.md'), lines.join('\n'));
  console.error('written bench/POST-FLOOR.md');
}

await main();
