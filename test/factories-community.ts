// Community records (committees, projects, events, sponsors, leaders) with sensible defaults. Each
// factory returns the stored row, defaults included, so a test can derive the bodies and the order it
// expects from what it inserted (with the helpers of test/lists.ts).
import type { Insertable } from 'kysely';
import type { Db } from '../src/db/index.ts';
import type { DB } from '../src/db/schema.ts';
import { insertRow as insert, type Row } from './factories.ts';

let sequence = 0;
const next = () => ++sequence;
const day = (n: number) => new Date(Date.UTC(2021, 0, 1) + n * 86_400_000).toISOString();

export function committee(db: Db, values: Row<'committees'> = {}) {
  const n = next();
  return insert(db, 'committees', {
    key: `committee-${n}`,
    name: `Committee ${n}`,
    is_active: true,
    created_at: day(n),
    updated_at: day(n + 10),
    ...values,
  });
}

export function project(db: Db, values: Row<'projects'> = {}) {
  const n = next();
  return insert(db, 'projects', {
    key: `project-${n}`,
    name: `project ${n}`,
    level: 'other',
    is_active: true,
    created_at: day(n),
    updated_at: day(n + 10),
    ...values,
  });
}

export function event(db: Db, values: Row<'events'> = {}) {
  const n = next();
  const start = day(n).slice(0, 10);
  return insert(db, 'events', {
    key: `event-${n}`,
    name: `Event ${n}`,
    category: 'other',
    start_date: start,
    end_date: start,
    created_at: day(n),
    updated_at: day(n),
    ...values,
  });
}

export function sponsor(db: Db, values: Row<'sponsors'> = {}) {
  const n = next();
  return insert(db, 'sponsors', { key: `sponsor-${n}`, name: `sponsor ${n}`, ...values });
}

export function leader(db: Db, values: Row<'leaders'> = {}) {
  const n = next();
  return insert(db, 'leaders', { key: `leader-${n}`, name: `Leader ${n}`, ...values });
}

export function entityLeader(db: Db, values: Insertable<DB['entity_leaders']>) {
  return insert(db, 'entity_leaders', values);
}

/** `YYYY-MM-DD` of today (UTC) shifted by `days`. */
export function utcDate(days = 0): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}
