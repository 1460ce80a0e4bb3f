// The SQL a request sends, captured from the app, and pgbench running it: the database's ceiling for that request.
// Shared by npm run bench (bench/run.ts: the uncached issues page) and npm run bench:scale (bench/scale.ts: lists).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CompiledQuery, LogEvent } from 'kysely';
import { buildApp } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { openDatabase } from '../src/db/index.ts';

export interface Timing {
  p50: number;
  p99: number;
  n: number;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

export function timing(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), n: sorted.length };
}

/** The app of a bench that reads its lists uncached and anonymously, the limiter out of the way, on `url`. */
export function uncachedConfig(url: string): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    REST_AUTH: 'optional',
    RATE_LIMIT_PER_SECOND: '1000000',
    RESPONSE_CACHE: 'false',
    DATABASE_URL: url,
  });
}

/**
 * The statements the app sends for one GET of each path once its total is counted (the steady state: each path is
 * asked twice, the second one captured), without the key check and the data version's reads.
 */
export async function captureSql(url: string, paths: readonly string[]): Promise<Map<string, CompiledQuery[]>> {
  let capturing = false;
  const captured: CompiledQuery[] = [];
  const log = (event: LogEvent) => {
    if (capturing && event.level === 'query') captured.push(event.query);
  };
  const database = await openDatabase({ databaseUrl: url, log });
  const app = await buildApp({ config: uncachedConfig(url), database });
  await app.ready();
  const out = new Map<string, CompiledQuery[]>();
  try {
    for (const p of paths) {
      await app.inject({ method: 'GET', url: p });
      captured.length = 0;
      capturing = true;
      const res = await app.inject({ method: 'GET', url: p });
      capturing = false;
      if (res.statusCode !== 200) throw new Error(`${p}: ${res.statusCode} ${res.body}`);
      out.set(
        p,
        captured.filter((q) => !/api_keys|app_meta/.test(q.sql)),
      );
    }
  } finally {
    await app.close();
    await database.close();
  }
  return out;
}

/**
 * A compiled statement with its parameters written in as literals, for pgbench. A colon inside a string literal is
 * written as an escape (E'\x3a'): pgbench reads `:name` as one of its variables, which in its prepared mode fails.
 */
export function inline(query: CompiledQuery): string {
  let text = query.sql.replace(/'(?:[^']|'')*'/g, withoutColons);
  for (let i = query.parameters.length; i >= 1; i--) {
    const value = query.parameters[i - 1];
    const literal =
      typeof value === 'number' || typeof value === 'bigint'
        ? String(value)
        : `'${String(value).replaceAll("'", "''")}'`;
    text = text.replaceAll(`$${i}`, withoutColons(literal));
  }
  return text.replace(/\s+/g, ' ');
}

/** A quoted SQL string literal, its colons written as escapes (an E'' literal) when it has any. */
function withoutColons(literal: string): string {
  return literal.includes(':') ? `E${literal.replaceAll('\\', '\\\\').replaceAll(':', '\\x3a')}` : literal;
}

export interface PgbenchOptions {
  seconds: number;
  /** pgbench -M prepared: each statement parsed and planned once, as named prepared statements are. */
  prepared?: boolean;
  clients?: number;
}

/** pgbench, the statements of one request as one transaction; p50/p99 from its per-transaction log, and its tps. */
export async function pgbench(
  url: string,
  statements: string[],
  { seconds, prepared = false, clients = 1 }: PgbenchOptions,
): Promise<Timing & { tps: number }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-pgbench-'));
  try {
    const script = path.join(dir, 'script.sql');
    await fs.writeFile(script, statements.map((s) => `${s};`).join('\n') + '\n');
    const u = new URL(url);
    const args = [
      '-n',
      '-c',
      String(clients),
      '-T',
      String(seconds),
      ...(prepared ? ['-M', 'prepared'] : []),
      '-f',
      script,
      '-l',
      '--log-prefix',
      path.join(dir, 'log'),
      '-h',
      u.hostname,
      '-p',
      u.port || '5432',
      '-U',
      decodeURIComponent(u.username || 'postgres'),
      u.pathname.slice(1),
    ];
    const out = spawnSync('pgbench', args, { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`pgbench failed: ${out.stderr}`);
    const samples: number[] = [];
    for (const file of await fs.readdir(dir)) {
      if (!file.startsWith('log')) continue;
      for (const line of (await fs.readFile(path.join(dir, file), 'utf8')).split('\n')) {
        const micros = Number(line.split(' ')[2]);
        if (Number.isFinite(micros) && line.trim() !== '') samples.push(micros / 1000);
      }
    }
    return { ...timing(samples), tps: Number(/tps = ([\d.]+)/.exec(out.stdout)?.[1] ?? 0) };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
