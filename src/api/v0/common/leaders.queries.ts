// The leaders of a chapter or project, in the order of the website data. A leader's public `key` is
// the GitHub login of the published member who is that leader, else null (the reference's rule).
import { sql } from 'kysely';
import type { Db } from '../../../db/index.ts';

export interface LeaderRow {
  key: string | null;
  name: string;
}

/**
 * Who the leader is, most certain first: the GitHub profile the website data names; a member whose
 * login is the leader's name; the one member (no fewer, no more) whose display name is the leader's
 * name, ignoring case. Only members whose GitHub profile is known (published ones) count.
 */
export function listLeaders(db: Db, group: 'chapter_id' | 'project_id', id: string): Promise<LeaderRow[]> {
  return db
    .selectFrom('entity_leaders')
    .innerJoin('leaders', 'leaders.id', 'entity_leaders.leader_id')
    .select([
      sql<string | null>`coalesce(
        (SELECT m.login FROM members m WHERE leaders.github_login <> '' AND lower(m.login) = lower(leaders.github_login)
          AND m.created_at IS NOT NULL AND m.updated_at IS NOT NULL),
        (SELECT m.login FROM members m WHERE lower(m.login) = lower(leaders.name)
          AND m.created_at IS NOT NULL AND m.updated_at IS NOT NULL),
        (SELECT min(m.login) FROM members m WHERE lower(m.name) = lower(leaders.name)
          AND m.created_at IS NOT NULL AND m.updated_at IS NOT NULL HAVING count(*) = 1)
      )`.as('key'),
      'leaders.name',
    ])
    .where(`entity_leaders.${group}`, '=', id)
    .orderBy('entity_leaders.position')
    .orderBy('entity_leaders.id')
    .execute();
}
