import type { FastifyReply, FastifyRequest } from 'fastify';
import mercurius from 'mercurius';
import type { Db } from '../db/index.ts';
import type { Config } from '../config.ts';
import {
  createApiKey,
  expiresSoon,
  revokeApiKey,
  rotateApiKey,
  type ApiKeyRecord,
} from '../api-keys/api-keys.service.ts';
import { countValidKeys, listLeakedKeys, listValidKeys } from '../api-keys/api-keys.queries.ts';
import { signInWithGithubToken } from '../auth/sign-in.ts';
import { endSession, type SessionUser } from '../auth/sessions.queries.ts';
import { SESSION_COOKIE } from '../auth/session.plugin.ts';
import { DateTime, UUID } from './scalars.ts';

export interface Context {
  request: FastifyRequest;
  reply: FastifyReply;
  db: Db;
  config: Config;
  /** The app's time: keys expire on it. */
  now(): Date;
}

const UNAUTHORIZED = 'You must be logged in to perform this action.';

export async function requireUser(context: Context): Promise<SessionUser> {
  const user = await context.request.sessionUser();
  if (!user) throw new mercurius.ErrorWithProps(UNAUTHORIZED, { code: 'UNAUTHORIZED' });
  return user;
}

/** How far back leakedApiKeys looks. */
const LEAKS_SHOWN_MS = 90 * 86_400_000;

const apiKeyNode = (key: ApiKeyRecord, now: Date) => ({
  id: Buffer.from(`ApiKeyNode:${key.uuid}`).toString('base64'),
  uuid: key.uuid,
  name: key.name,
  createdAt: key.created_at,
  expiresAt: key.expires_at,
  isRevoked: key.is_revoked,
  lastUsedAt: key.last_used_at,
  expiresSoon: expiresSoon(key, now),
  revokedAt: key.revoked_at,
  leakUrl: key.leak_url,
  leakReportedAt: key.leak_reported_at,
});

const userNode = (user: SessionUser, config: Config) => ({
  id: Buffer.from(`AuthUserNode:${user.id}`).toString('base64'),
  username: user.login,
  isOwaspStaff: config.staffLogins.includes(user.login.toLowerCase()),
  login: user.login,
  name: user.name,
  avatarUrl: user.avatar_url,
});

export const resolvers = {
  DateTime,
  UUID,
  Query: {
    apiKeys: async (_: unknown, __: unknown, context: Context) => {
      const now = context.now();
      return (await listValidKeys(context.db, (await requireUser(context)).id, now)).map((key) => apiKeyNode(key, now));
    },
    leakedApiKeys: async (_: unknown, __: unknown, context: Context) => {
      const now = context.now();
      const user = await requireUser(context);
      const since = new Date(now.getTime() - LEAKS_SHOWN_MS);
      return (await listLeakedKeys(context.db, user.id, since)).map((key) => apiKeyNode(key, now));
    },
    activeApiKeyCount: async (_: unknown, __: unknown, context: Context) =>
      countValidKeys(context.db, (await requireUser(context)).id, context.now()),
    me: async (_: unknown, __: unknown, context: Context) => {
      const user = await context.request.sessionUser();
      return user ? userNode(user, context.config) : null;
    },
  },
  Mutation: {
    createApiKey: async (_: unknown, args: { name: string; expiresAt: Date }, context: Context) => {
      const user = await requireUser(context);
      const now = context.now();
      const result = await createApiKey(context.db, user.id, args.name, args.expiresAt, now);
      return { ...result, apiKey: result.apiKey ? apiKeyNode(result.apiKey, now) : null };
    },
    rotateApiKey: async (_: unknown, args: { uuid: string; gracePeriodHours: number }, context: Context) => {
      const user = await requireUser(context);
      const now = context.now();
      const announcer = context.request.server.shared.changes;
      const result = await rotateApiKey(context.db, user.id, args.uuid, args.gracePeriodHours, announcer, now);
      return { ...result, apiKey: result.apiKey ? apiKeyNode(result.apiKey, now) : null };
    },
    revokeApiKey: async (_: unknown, args: { uuid: string }, context: Context) => {
      const user = await requireUser(context);
      return revokeApiKey(context.db, user.id, args.uuid, context.request.server.shared.changes);
    },
    githubAuth: async (_: unknown, args: { accessToken: string }, context: Context) => {
      const result = await signInWithGithubToken(context.db, context.config, args.accessToken);
      if (!result.ok) return { ok: false, message: result.message, user: null };
      context.reply.startSessionCookies(result.session.id, result.session.expiresAt);
      return { ok: true, message: 'Signed in successfully.', user: userNode(result.user, context.config) };
    },
    logoutUser: async (_: unknown, __: unknown, context: Context) => {
      // As the reference: signing out while signed out is a result, not an error (the frontend reads `ok`).
      if (!(await context.request.sessionUser()))
        return { ok: false, code: 'UNAUTHORIZED', message: 'User is not logged in.' };
      await endSession(context.db, context.request.cookies[SESSION_COOKIE]!);
      context.reply.clearSessionCookies();
      return { ok: true, code: 'SUCCESS', message: 'Logged out successfully.' };
    },
  },
};
