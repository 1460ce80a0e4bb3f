// Inserts records with sensible defaults, so a test states only what it is about.
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../src/db/index.ts';
import type { DB } from '../src/db/schema.ts';
import { countryCode } from '../src/geo/countries.ts';

let sequence = 0;
const next = () => ++sequence;

/** An ISO timestamp `n` days after 2020-01-01: tests pick equal or distinct dates by number. */
export const day = (n: number) => new Date(Date.UTC(2020, 0, 1) + n * 86_400_000).toISOString();

/** The columns a factory's caller may set (the factory fills in the required ones). */
export type Row<T extends keyof DB> = Partial<Insertable<DB[T]>>;

/** Inserts one row into `table` and returns it as stored, defaults included. */
export function insertRow<T extends keyof DB & string>(
  db: Db,
  table: T,
  values: Insertable<DB[T]>,
): Promise<Selectable<DB[T]>> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (db.insertInto(table) as any).values(values).returningAll().executeTakeFirstOrThrow();
}

async function insert<T extends keyof DB & string>(db: Db, table: T, values: Insertable<DB[T]>): Promise<string> {
  const row = await insertRow(db, table, values);
  return String((row as { id: string }).id);
}

export function chapter(db: Db, values: Row<'chapters'> = {}) {
  const n = next();
  return insert(db, 'chapters', {
    key: `chapter-${n}`,
    name: `OWASP Chapter ${n}`,
    is_active: true,
    latitude: 10 + (n % 50),
    longitude: 20 + (n % 100),
    related_urls: '[]',
    contribution_data: '{}',
    contribution_stats: '{}',
    created_at: day(n),
    updated_at: day(n + 10),
    // The import stores the code of the country beside its name; the country filter matches by code.
    country_code: countryCode(values.country ?? '') ?? '',
    ...values,
  });
}

export function organization(db: Db, values: Row<'organizations'> = {}) {
  const n = next();
  return insert(db, 'organizations', {
    github_id: 1_000_000 + n,
    login: `org-${n}`,
    created_at: day(n),
    updated_at: day(n),
    ...values,
  });
}

export function member(db: Db, values: Row<'members'> = {}) {
  const n = next();
  return insert(db, 'members', {
    github_id: 2_000_000 + n,
    login: `user-${n}`,
    created_at: day(n),
    updated_at: day(n),
    ...values,
  });
}

export function repository(db: Db, values: Row<'repositories'> & { owner_login: string }) {
  const n = next();
  return insert(db, 'repositories', {
    github_id: 3_000_000 + n,
    name: `repo-${n}`,
    topics: '[]',
    created_at: day(n),
    updated_at: day(n),
    ...values,
  });
}

export function issue(db: Db, values: Row<'issues'> & { repository_id: string }) {
  const n = next();
  return insert(db, 'issues', {
    github_id: 4_000_000 + n,
    number: n,
    title: `Issue ${n}`,
    state: 'open',
    created_at: day(n),
    updated_at: day(n),
    ...values,
  });
}
