// One load run: wrk when installed (it drives a server harder than a Node client can), else autocannon.
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';

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

/** Runs `warmupSeconds` of load that is not recorded (the JIT compiles the hot paths), then the measured `seconds`. */
export async function runLoad(
  url: string,
  headers: Record<string, string>,
  connections: number,
  seconds: number,
  warmupSeconds = 0,
): Promise<LoadResult> {
  if (warmupSeconds > 0) await runLoad(url, headers, connections, warmupSeconds);
  if (hasWrk) {
    const args = [
      '-t2',
      `-c${connections}`,
      `-d${seconds}s`,
      '--latency',
      ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
      url,
    ];
    const out = spawnSync('wrk', args, { encoding: 'utf8' }).stdout;
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
  const result = await autocannon({ url, headers, connections, duration: seconds });
  return {
    tool: 'autocannon',
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors - result.timeouts,
    timeouts: result.timeouts,
  };
}
