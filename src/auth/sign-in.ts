// Signing in: a GitHub access token (from the OAuth callback or a single-page client) becomes a
// local user and a server-side session.
import type { Config } from '../config.ts';
import type { Db } from '../db/index.ts';
import { fetchProfile, GithubAuthError } from './github-sign-in.client.ts';
import { startSession, type SessionUser } from './sessions.queries.ts';
import { upsertGithubUser } from './users.queries.ts';

export type SignInResult =
  | { ok: true; user: SessionUser; session: { id: string; expiresAt: Date } }
  | { ok: false; reason: GithubAuthError['reason']; message: string };

export async function signInWithGithubToken(db: Db, config: Config, accessToken: string): Promise<SignInResult> {
  try {
    const profile = await fetchProfile(config.github.apiUrl, accessToken);
    const user = await upsertGithubUser(db, profile);
    const session = await startSession(db, user.id, config.sessionTtlHours);
    return { ok: true, user, session };
  } catch (error) {
    if (error instanceof GithubAuthError) return { ok: false, reason: error.reason, message: error.message };
    throw error;
  }
}
