// Cookies, the signed-in user of a request, and CSRF protection (double submit: a request that
// changes state with a session cookie must repeat the `csrftoken` cookie in `X-CSRFToken`).
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import { Type } from '@sinclair/typebox';
import { AppError } from '../errors.ts';
import { findSessionUser, type SessionUser } from './sessions.queries.ts';
import { sameSecret } from '../api-keys/api-keys.format.ts';

export const SESSION_COOKIE = 'cds_session';
export const CSRF_COOKIE = 'csrftoken';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const users = new WeakMap<FastifyRequest, Promise<SessionUser | undefined>>();

export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export async function registerSessions(app: FastifyInstance): Promise<void> {
  await app.register(cookie);
  const secure = app.config.isProduction;

  app.decorateRequest('sessionUser', function (this: FastifyRequest) {
    let user = users.get(this);
    if (!user) {
      const id = this.cookies[SESSION_COOKIE];
      user = id ? findSessionUser(app.database.db, id) : Promise.resolve(undefined);
      users.set(this, user);
    }
    return user;
  });

  app.decorateReply('startSessionCookies', function (this: FastifyReply, sessionId: string, expiresAt: Date) {
    this.setCookie(SESSION_COOKIE, sessionId, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure,
      expires: expiresAt,
    });
    // A new CSRF token with every sign-in.
    this.setCookie(CSRF_COOKIE, newToken(), {
      path: '/',
      httpOnly: false,
      sameSite: 'lax',
      secure,
      expires: expiresAt,
    });
    return this;
  });

  app.decorateReply('clearSessionCookies', function (this: FastifyReply) {
    this.clearCookie(SESSION_COOKIE, { path: '/' });
    return this;
  });

  app.addHook('onRequest', (request, _reply, done) => {
    if (SAFE_METHODS.has(request.method) || !request.cookies[SESSION_COOKIE]) return done();
    const header = request.headers['x-csrftoken'];
    const expected = request.cookies[CSRF_COOKIE];
    if (typeof header !== 'string' || !expected || !sameSecret(header, expected)) {
      return done(new AppError(403, { message: 'CSRF token missing or incorrect' }));
    }
    done();
  });

  app.get(
    '/csrf/',
    { schema: { hide: true, response: { 200: Type.Object({ csrftoken: Type.String() }) } } },
    async (request, reply) => {
      const existing = request.cookies[CSRF_COOKIE];
      const token = existing && TOKEN_SHAPE.test(existing) ? existing : newToken();
      reply.setCookie(CSRF_COOKIE, token, {
        path: '/',
        httpOnly: false,
        sameSite: 'lax',
        secure,
        maxAge: 365 * 86_400,
      });
      reply.header('cache-control', 'no-store');
      return { csrftoken: token };
    },
  );
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user, resolved from the session cookie once per request. */
    sessionUser(): Promise<SessionUser | undefined>;
  }
  interface FastifyReply {
    startSessionCookies(sessionId: string, expiresAt: Date): FastifyReply;
    clearSessionCookies(): FastifyReply;
  }
}
