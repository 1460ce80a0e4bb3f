// Loads the bundled (or a given) dataset into the database. Files are read and validated first;
// then every write happens in one transaction, so a bad file changes nothing.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { readOwaspData, writeOwaspData, type OwaspReport } from './owasp/owasp.import.ts';
import { readGithubData, writeGithubData, type GithubReport } from './github/github.import.ts';

export const BUNDLED_DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../data');

export interface ImportSources {
  /** Folder with the OWASP website's data files (chapters.json, …). */
  owaspDir: string;
  /** Folder with the recorded GitHub responses (one sub-folder per account). */
  githubDir: string;
}

export interface ImportReport {
  owasp: OwaspReport;
  github: GithubReport;
  dataVersion: number;
  durationMs: number;
}

export function sourcesFrom(dir: string = BUNDLED_DATA_DIR): ImportSources {
  return { owaspDir: path.join(dir, 'owasp'), githubDir: path.join(dir, 'github') };
}

export async function importDataset(db: Db, sources: ImportSources = sourcesFrom()): Promise<ImportReport> {
  const started = performance.now();
  const owaspData = await readOwaspData(sources.owaspDir);
  const githubData = await readGithubData(sources.githubDir);
  return db.transaction().execute(async (trx) => {
    // GitHub first: leaders may link to the members it stores.
    const github = await writeGithubData(trx, githubData);
    const owasp = await writeOwaspData(trx, owaspData);
    const dataVersion = await bumpDataVersion(trx);
    return { owasp, github, dataVersion, durationMs: Math.round(performance.now() - started) };
  });
}

/** A counter that changes whenever stored data changes; response caches key on it. */
export async function bumpDataVersion(db: Db): Promise<number> {
  const row = await db
    .insertInto('app_meta')
    .values({ key: 'data_version', value: '1' })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        value: sql`to_jsonb((app_meta.value #>> '{}')::bigint + 1)`,
        updated_at: sql`now()`,
      }),
    )
    .returning(sql<string>`value #>> '{}'`.as('version'))
    .executeTakeFirstOrThrow();
  return Number(row.version);
}

export async function readDataVersion(db: Db): Promise<number> {
  const row = await db
    .selectFrom('app_meta')
    .select(sql<string>`value #>> '{}'`.as('version'))
    .where('key', '=', 'data_version')
    .executeTakeFirst();
  return row ? Number(row.version) : 0;
}
