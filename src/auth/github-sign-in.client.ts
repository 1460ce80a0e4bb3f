// The few GitHub calls sign-in needs. Addresses come from configuration, so tests use a stand-in.
import type { GithubProfile } from './users.queries.ts';

export type GithubFailure = 'denied' | 'invalid_token' | 'no_verified_email' | 'unavailable';

export class GithubAuthError extends Error {
  constructor(
    readonly reason: GithubFailure,
    message: string,
  ) {
    super(message);
    this.name = 'GithubAuthError';
  }
}

const TIMEOUT_MS = 5_000;

async function call(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    throw new GithubAuthError('unavailable', 'GitHub could not be reached. Try again later.');
  }
}

/**
 * GitHub refusing for its rate limit (403 or 429 with no requests left, or a Retry-After): not the user's fault nor an
 * invalid token, so it is said for what it is, with the time GitHub gives.
 */
function rateLimited(response: Response): GithubAuthError | undefined {
  if (response.status !== 403 && response.status !== 429) return undefined;
  const reset = Number(response.headers.get('x-ratelimit-reset'));
  const retryAfter = Number(response.headers.get('retry-after'));
  if (response.headers.get('x-ratelimit-remaining') !== '0' && !(retryAfter > 0)) return undefined;
  const until = reset > 0 ? new Date(reset * 1000) : retryAfter > 0 ? new Date(Date.now() + retryAfter * 1000) : null;
  const when = until ? ` until ${until.toISOString().slice(11, 16)} UTC` : '';
  return new GithubAuthError('unavailable', `GitHub's rate limit for this service is spent${when}. Try again then.`);
}

async function json(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    throw new GithubAuthError('unavailable', 'GitHub sent an unreadable answer. Try again later.');
  }
}

export interface CodeExchange {
  webUrl: string;
  clientId: string;
  clientSecret: string;
  code: string;
  redirectUri: string;
  codeVerifier: string;
}

/** Trades an authorization code (with its PKCE verifier) for an access token. */
export async function exchangeCode(exchange: CodeExchange): Promise<string> {
  const response = await call(`${exchange.webUrl}/login/oauth/access_token`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: exchange.clientId,
      client_secret: exchange.clientSecret,
      code: exchange.code,
      redirect_uri: exchange.redirectUri,
      code_verifier: exchange.codeVerifier,
    }),
  });
  const limited = rateLimited(response);
  if (limited) throw limited;
  if (response.status >= 500)
    throw new GithubAuthError('unavailable', 'GitHub could not complete the sign-in. Try again later.');
  const body = (await json(response)) as { access_token?: unknown; error?: unknown };
  if (typeof body.access_token !== 'string' || body.access_token === '') {
    throw new GithubAuthError('denied', 'GitHub did not accept the sign-in. Please try again.');
  }
  return body.access_token;
}

/** The user behind a token, with their verified primary e-mail (required). */
export async function fetchProfile(apiUrl: string, token: string): Promise<GithubProfile> {
  const headers = {
    accept: 'application/vnd.github+json',
    authorization: `Bearer ${token}`,
    'user-agent': 'community-data-service',
  };
  const userResponse = await call(`${apiUrl}/user`, { headers });
  const limited = rateLimited(userResponse);
  if (limited) throw limited;
  if (userResponse.status === 401 || userResponse.status === 403) {
    throw new GithubAuthError('invalid_token', 'The GitHub token is invalid or expired.');
  }
  if (!userResponse.ok) throw new GithubAuthError('unavailable', 'GitHub could not be reached. Try again later.');
  const user = (await json(userResponse)) as { id?: unknown; login?: unknown; name?: unknown; avatar_url?: unknown };
  if (typeof user.id !== 'number' || typeof user.login !== 'string') {
    throw new GithubAuthError('unavailable', 'GitHub sent an unexpected answer. Try again later.');
  }
  const emailsResponse = await call(`${apiUrl}/user/emails`, { headers });
  const emailsLimited = rateLimited(emailsResponse);
  if (emailsLimited) throw emailsLimited;
  if (!emailsResponse.ok) {
    throw new GithubAuthError(
      'no_verified_email',
      'Your GitHub e-mail addresses could not be read: allow access to them.',
    );
  }
  const emails = (await json(emailsResponse)) as { email?: unknown; primary?: unknown; verified?: unknown }[];
  const primary = Array.isArray(emails) ? emails.find((e) => e.primary === true && e.verified === true) : undefined;
  if (!primary || typeof primary.email !== 'string') {
    throw new GithubAuthError('no_verified_email', 'Your GitHub account needs a verified primary e-mail address.');
  }
  return {
    githubId: user.id,
    login: user.login,
    name: typeof user.name === 'string' ? user.name : '',
    avatarUrl: typeof user.avatar_url === 'string' ? user.avatar_url : '',
    email: primary.email,
  };
}
