import { sql } from 'kysely';
import type { Db } from '../db/index.ts';

export interface GithubProfile {
  githubId: number;
  login: string;
  name: string;
  avatarUrl: string;
  email: string;
}

export async function upsertGithubUser(db: Db, profile: GithubProfile) {
  return db
    .insertInto('users')
    .values({
      github_id: profile.githubId,
      login: profile.login,
      name: profile.name,
      avatar_url: profile.avatarUrl,
      email: profile.email,
      last_login_at: sql`now()`,
    })
    .onConflict((oc) =>
      oc.column('github_id').doUpdateSet({
        login: profile.login,
        name: profile.name,
        avatar_url: profile.avatarUrl,
        email: profile.email,
        updated_at: sql`now()`,
        last_login_at: sql`now()`,
      }),
    )
    .returning(['id', 'login', 'name', 'avatar_url'])
    .executeTakeFirstOrThrow();
}

/** Local development accounts have no GitHub id; they are found by login. */
export async function upsertLocalUser(db: Db, login: string) {
  const existing = await db
    .updateTable('users')
    .set({ last_login_at: sql`now()` })
    .where(sql`lower(login)`, '=', login.toLowerCase())
    .returning(['id', 'login', 'name', 'avatar_url'])
    .executeTakeFirst();
  if (existing) return existing;
  return db
    .insertInto('users')
    .values({ login, last_login_at: sql`now()` })
    .returning(['id', 'login', 'name', 'avatar_url'])
    .executeTakeFirstOrThrow();
}

export function findUserByLogin(db: Db, login: string) {
  return db
    .selectFrom('users')
    .select(['id', 'login'])
    .where(sql`lower(login)`, '=', login.toLowerCase())
    .executeTakeFirst();
}

/** An account created by an operator (`cds users create`): no GitHub id, never signed in. Undefined when the login is taken. */
export function insertLocalUser(db: Db, login: string) {
  return db
    .insertInto('users')
    .values({ login })
    .onConflict((oc) => oc.expression(sql`lower(login)`).doNothing())
    .returning(['id', 'login'])
    .executeTakeFirst();
}
