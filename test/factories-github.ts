// The GitHub records test/factories.ts does not cover (milestones, labels, releases), and the
// repositories the milestone, issue and release tests file them under.
import type { Insertable } from 'kysely';
import type { Db } from '../src/db/index.ts';
import type { DB } from '../src/db/schema.ts';
import { day, insertRow, organization, repository, type Row } from './factories.ts';

let sequence = 0;
const next = () => ++sequence;

async function insert<T extends keyof DB & string>(db: Db, table: T, values: Insertable<DB[T]>): Promise<number> {
  const row = await insertRow(db, table, values);
  return Number((row as { id: string }).id);
}

export function milestone(db: Db, values: Row<'milestones'> & { repository_id: string | number }) {
  const n = next();
  return insert(db, 'milestones', {
    github_id: 5_000_000 + n,
    number: n,
    title: `Milestone ${n}`,
    state: 'open',
    created_at: day(n),
    updated_at: day(n),
    ...values,
  });
}

export function label(db: Db, values: Row<'labels'> & { repository_id: string | number }) {
  const n = next();
  return insert(db, 'labels', { github_id: 6_000_000 + n, name: `label-${n}`, color: 'ededed', ...values });
}

export function release(db: Db, values: Row<'releases'> & { repository_id: string | number }) {
  const n = next();
  return insert(db, 'releases', {
    github_id: 7_000_000 + n,
    tag_name: `v${n}.0.0`,
    name: `Release ${n}`,
    published_at: day(n),
    created_at: day(n),
    ...values,
  });
}

/**
 * OWASP/Nest and OWASP/Other under the OWASP organization, and octo-org/Nest: a repository of the same
 * name under another owner (and no organization), which the organization filters must tell apart.
 */
export async function nestRepositories(db: Db) {
  const owasp = await organization(db, { login: 'OWASP' });
  const nest = await repository(db, { owner_login: 'OWASP', organization_id: owasp, name: 'Nest' });
  const other = await repository(db, { owner_login: 'OWASP', organization_id: owasp, name: 'Other' });
  const octoNest = await repository(db, { owner_login: 'octo-org', name: 'Nest' });
  return { owasp, nest, other, octoNest };
}

/** A record of a repository-scoped list (issues, milestones) as its tests track it. */
export interface Tracked {
  id: number;
  title: string;
  state: 'open' | 'closed';
  created_at: string;
  updated_at: string;
}

/** [repository id, number, title, state, created day, updated day] */
export type TrackedSpec = readonly [string, number, string, 'open' | 'closed', number, number];

/** Inserts one record per spec (`insert` adds what its table needs) and returns them as tracked. */
export async function insertTracked(
  specs: readonly TrackedSpec[],
  insert: (values: Omit<Tracked, 'id'> & { repository_id: string; number: number }) => Promise<unknown>,
): Promise<Tracked[]> {
  const rows: Tracked[] = [];
  for (const [repository_id, number, title, state, created, updated] of specs) {
    const values = { title, state, created_at: day(created), updated_at: day(updated) };
    rows.push({ id: Number(await insert({ repository_id, number, ...values })), ...values });
  }
  return rows;
}
