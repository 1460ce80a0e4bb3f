// One load run: wrk when installed (it drives a server harder than a Node client can), else autocannon.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface LoadResult {
  tool: string;
  rps: number;
  p50: number;
  p99: number;
  /** Answers with a status outside 2xx (and connection errors). */
  non2xx: number;
  /** Requests not answered within the load generator's timeout (2 s for wrk, 10 s for autocannon). */
  timeouts: number;
}

const hasWrk = spawnSync('wrk', ['--version']).error === undefined;

function ms(text: string): number {
  const match = /([\d.]+)(us|ms|s)/.exec(text);
  if (!match) return NaN;
  const value = Number(match[1]);
  return Math.round((match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value) * 100) / 100;
}

/** A request other than a GET without a body (the MCP endpoint's POST of one JSON-RPC message). */
export interface LoadRequest {
  method: 'POST';
  body: string;
}

/** The MCP endpoint's `get` of the chapter detail (bench/run.ts), as one JSON-RPC message. */
export const MCP_GET: LoadRequest = {
  method: 'POST',
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'get', arguments: { resource: 'chapters', id: 'london' } },
  }),
};
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** wrk sends a method and a body from a Lua script; the headers stay on its command line. */
function wrkScript(request: LoadRequest): string {
  const file = path.join(os.tmpdir(), `cds-bench-${process.pid}.lua`);
  writeFileSync(file, `wrk.method = ${JSON.stringify(request.method)}\nwrk.body = ${JSON.stringify(request.body)}\n`);
  return file;
}

/** Runs `warmupSeconds` of load that is not recorded (the JIT compiles the hot paths), then the measured `seconds`. */
export async function runLoad(
  url: string,
  headers: Record<string, string>,
  connections: number,
  seconds: number,
  warmupSeconds = 0,
  request?: LoadRequest,
): Promise<LoadResult> {
  if (warmupSeconds > 0) await runLoad(url, headers, connections, warmupSeconds, 0, request);
  if (hasWrk) {
    const script = request ? wrkScript(request) : undefined;
    const args = [
      '-t2',
      `-c${connections}`,
      `-d${seconds}s`,
      '--latency',
      ...(script ? ['-s', script] : []),
      ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
      url,
    ];
    const out = spawnSync('wrk', args, { encoding: 'utf8' }).stdout;
    if (script) rmSync(script, { force: true });
    const line = (label: string) => out.split('\n').find((l) => l.trim().startsWith(label)) ?? '';
    return {
      tool: 'wrk',
      rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
      p50: ms(line('50%').trim().split(/\s+/)[1] ?? ''),
      p99: ms(line('99%').trim().split(/\s+/)[1] ?? ''),
      non2xx:
        Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0) +
        (/Socket errors: connect (\d+), read (\d+), write (\d+)/
          .exec(out)
          ?.slice(1)
          .reduce((a, b) => a + Number(b), 0) ?? 0),
      timeouts: Number(/Socket errors:.*timeout (\d+)/.exec(out)?.[1] ?? 0),
    };
  }
  const result = await autocannon({ url, headers, connections, duration: seconds, ...(request ?? {}) });
  return {
    tool: 'autocannon',
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors - result.timeouts,
    timeouts: result.timeouts,
  };
}

/** Polls `url` every 100 ms until it answers 2xx (a server starting); throws after `seconds`. */
export async function waitForServer(
  url: string,
  { headers = {}, seconds = 120 }: { headers?: Record<string, string>; seconds?: number } = {},
): Promise<void> {
  for (let i = 0; i < seconds * 10; i++) {
    try {
      if ((await fetch(url, { headers })).ok) return;
    } catch {
      // starting
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

/** `node <args>` from the checkout's root, with `env` over this process's environment; its stderr passed on. */
export function startNode(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** SIGTERM to a child the bench started, resolved once it has exited (at once if it already has). */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
