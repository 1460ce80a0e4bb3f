// Opens the one database the service uses: a PostgreSQL server when DATABASE_URL is set,
// otherwise an embedded PGlite (PostgreSQL compiled to WASM) persisted under DATA_DIR.
// Both go through node-postgres, so every query, type parser and migration is shared.
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { PGlite } from '@electric-sql/pglite';
import type { DB } from './schema.ts';

// `date` columns stay `YYYY-MM-DD` strings: turning them into Date objects would shift them by
// the process's time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);

// timestamptz arrives as `2024-05-01 12:00:00.123456+00`: made ISO, V8 parses it far faster than the
// driver's generic parser (a list page holds hundreds of them). Anything unusual (BC, infinity) falls back.
const parseTimestamp = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, (value: string) => {
  const iso = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?[+-]\d\d$/.test(value) ? `${value.replace(' ', 'T')}:00` : undefined;
  const date = iso ? new Date(iso) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : parseTimestamp(value);
});

export type Db = Kysely<DB>;
export type DbKind = 'postgres' | 'pglite';

export interface Database {
  readonly db: Db;
  readonly kind: DbKind;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string | undefined;
  /** Folder of the embedded database; `memory://` keeps it in memory. */
  dataDir?: string | undefined;
  /** An already-open PGlite instance (tests); closed with the database. */
  pglite?: PGlite;
  poolSize?: number;
  /** PostgreSQL server only: cancel statements running longer than this (the serving pool sets it). */
  statementTimeoutMs?: number;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      // No request may hold a connection for long; a cancelled statement becomes a 503.
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    });
    // A connection dropped by the server must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }

  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  let pglite = options.pglite;
  if (!pglite) {
    const dataDir = options.dataDir ?? 'memory://';
    if (!dataDir.startsWith('memory://')) await fs.mkdir(path.dirname(dataDir), { recursive: true });
    pglite = await PGlite.create(dataDir, { extensions: { pg_trgm } });
  }
  const instance = pglite;
  const pool = new pg.Pool(createPgConfig(instance) as unknown as pg.PoolConfig);
  pool.on('error', () => {});
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    kind: 'pglite',
    async close() {
      await db.destroy();
      if (!instance.closed) await instance.close();
    },
  };
}

/** Where the embedded database lives inside DATA_DIR. */
export function pgliteDir(dataDir: string): string {
  return path.join(dataDir, 'pglite');
}
