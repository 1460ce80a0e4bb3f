// Browser sign-in: the GitHub OAuth web flow (authorization code with `state` and PKCE),
// logout, and the local development sign-in when AUTH_DEV_LOGIN=true.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { exchangeCode, GithubAuthError } from './github-sign-in.client.ts';
import { signInWithGithubToken } from './sign-in.ts';
import { endSession, startSession } from './sessions.queries.ts';
import { upsertLocalUser } from './users.queries.ts';
import { sameSecret } from '../api-keys/api-keys.format.ts';
import { newToken, SESSION_COOKIE } from './session.plugin.ts';
import { errorPage, GITHUB_NOT_CONFIGURED } from './sign-in-error.page.ts';

const FLOW_COOKIE = 'cds_oauth';
const FLOW_PATH = '/auth/github';
const DEFAULT_NEXT = '/settings/api-keys';

/** Only local paths are followed after sign-in, so the flow cannot be used as an open redirect. */
function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])[\x21-\x7e]*$/.test(value) ? value : DEFAULT_NEXT;
}

function callbackUrl(app: FastifyInstance, request: FastifyRequest): string {
  const base = app.config.publicUrl ?? `${request.protocol}://${request.host}`;
  return `${base}/auth/github/callback`;
}

function failPage(reply: FastifyReply, status: number, message: string, details = '') {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(errorPage(message, details));
}

export function authRoutes(app: FastifyInstance): void {
  const { github } = app.config;
  const secure = app.config.isProduction;

  app.get('/auth/github/login', { schema: { hide: true } }, async (request, reply) => {
    if (!github.clientId || !github.clientSecret) {
      const local = app.config.authDevLogin
        ? '<p>This server offers a local sign-in for development: <a href="/settings/api-keys">Sign in locally</a>.</p>'
        : '';
      return failPage(
        reply,
        404,
        'Sign-in with GitHub is not configured on this server.',
        GITHUB_NOT_CONFIGURED + local,
      );
    }
    const state = newToken();
    const verifier = newToken();
    const next = safeNext((request.query as { next?: unknown }).next);
    // The state, the PKCE verifier and the page to return to travel in a short-lived HttpOnly
    // cookie scoped to the callback, so nothing about the flow is stored server-side.
    reply.setCookie(FLOW_COOKIE, `${state}.${verifier}.${Buffer.from(next).toString('base64url')}`, {
      path: FLOW_PATH,
      httpOnly: true,
      sameSite: 'lax',
      secure,
      maxAge: 600,
    });
    const url = new URL(`${github.webUrl}/login/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: github.clientId,
      redirect_uri: callbackUrl(app, request),
      scope: 'read:user user:email',
      state,
      code_challenge: crypto.createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      allow_signup: 'true',
    }).toString();
    return reply.header('cache-control', 'no-store').redirect(url.toString(), 302);
  });

  app.get('/auth/github/callback', { schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const [state, verifier, nextEncoded] = (request.cookies[FLOW_COOKIE] ?? '').split('.');
    reply.clearCookie(FLOW_COOKIE, { path: FLOW_PATH });
    if (!state || !verifier || typeof query.state !== 'string' || !sameSecret(state, query.state)) {
      return failPage(reply, 400, 'This sign-in link is invalid or has expired. Please start again.');
    }
    if (query.error !== undefined) return failPage(reply, 403, 'Sign-in was cancelled on GitHub.');
    if (typeof query.code !== 'string' || query.code === '' || !github.clientId || !github.clientSecret) {
      return failPage(reply, 400, 'GitHub did not send an authorization code. Please start again.');
    }
    let token: string;
    try {
      token = await exchangeCode({
        webUrl: github.webUrl,
        clientId: github.clientId,
        clientSecret: github.clientSecret,
        code: query.code,
        redirectUri: callbackUrl(app, request),
        codeVerifier: verifier,
      });
    } catch (error) {
      if (!(error instanceof GithubAuthError)) throw error;
      return failPage(reply, error.reason === 'unavailable' ? 503 : 403, error.message);
    }
    const result = await signInWithGithubToken(app.database.db, app.config, token);
    if (!result.ok) return failPage(reply, result.reason === 'unavailable' ? 503 : 403, result.message);
    reply.startSessionCookies(result.session.id, result.session.expiresAt);
    return reply.redirect(safeNext(Buffer.from(nextEncoded ?? '', 'base64url').toString()), 302);
  });

  app.post('/auth/logout', { schema: { hide: true } }, async (request, reply) => {
    const sessionId = request.cookies[SESSION_COOKIE];
    if (sessionId) await endSession(app.database.db, sessionId);
    reply.clearSessionCookies();
    return { ok: true };
  });

  if (app.config.authDevLogin) {
    app.post(
      '/auth/dev/login',
      {
        schema: {
          hide: true,
          body: Type.Object({
            login: Type.String({ minLength: 1, maxLength: 39, pattern: '^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$' }),
          }),
        },
      },
      async (request, reply) => {
        const { login } = request.body as { login: string };
        const user = await upsertLocalUser(app.database.db, login);
        const session = await startSession(app.database.db, user.id, app.config.sessionTtlHours);
        reply.startSessionCookies(session.id, session.expiresAt);
        return { ok: true, login: user.login };
      },
    );
  }
}
