// A small stand-in for GitHub's OAuth and user API on 127.0.0.1, started by the tests themselves.
// It checks what the real one checks: client credentials, the code, and the PKCE verifier.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInUser {
  id: number;
  login: string;
  name: string;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface GithubStandIn {
  url: string;
  clientId: string;
  clientSecret: string;
  /** Who approves the next authorization; null makes the user deny it. */
  user: StandInUser | null;
  /** Access tokens handed out, by token. */
  tokens: Map<string, StandInUser>;
  requests: string[];
  close(): Promise<void>;
}

/** The service's settings that point its GitHub sign-in at the stand-in. */
export function githubSignInEnv(github: GithubStandIn): Record<string, string> {
  return {
    GITHUB_CLIENT_ID: github.clientId,
    GITHUB_CLIENT_SECRET: github.clientSecret,
    GITHUB_WEB_URL: github.url,
    GITHUB_API_URL: github.url,
  };
}

export const ALICE: StandInUser = {
  id: 501,
  login: 'alice-gh',
  name: 'Alice Example',
  emails: [
    { email: 'alice@old.example', primary: false, verified: true },
    { email: 'alice@example.org', primary: true, verified: true },
  ],
};

export async function startGithubStandIn(): Promise<GithubStandIn> {
  const codes = new Map<string, { user: StandInUser; challenge: string; redirectUri: string }>();
  const standIn = {
    clientId: 'test-client-id',
    clientSecret: 'test-client-secret',
    user: ALICE as StandInUser | null,
    tokens: new Map<string, StandInUser>(),
    requests: [] as string[],
  };

  const server = http.createServer((req, res) => {
    (async () => {
      const url = new URL(req.url ?? '/', 'http://standin');
      standIn.requests.push(`${req.method} ${url.pathname}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
        const q = url.searchParams;
        const redirect = new URL(q.get('redirect_uri') ?? '');
        redirect.searchParams.set('state', q.get('state') ?? '');
        if (q.get('client_id') !== standIn.clientId || q.get('code_challenge_method') !== 'S256') {
          redirect.searchParams.set('error', 'invalid_request');
        } else if (!standIn.user) {
          redirect.searchParams.set('error', 'access_denied');
        } else {
          const code = crypto.randomBytes(10).toString('hex');
          codes.set(code, {
            user: standIn.user,
            challenge: q.get('code_challenge') ?? '',
            redirectUri: q.get('redirect_uri') ?? '',
          });
          redirect.searchParams.set('code', code);
        }
        res.writeHead(302, { location: redirect.toString() }).end();
        return;
      }
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        let raw = '';
        for await (const chunk of req) raw += chunk;
        const body = JSON.parse(raw || '{}') as Record<string, string>;
        const grant = codes.get(body.code ?? '');
        codes.delete(body.code ?? '');
        const verifierOk =
          grant &&
          crypto
            .createHash('sha256')
            .update(body.code_verifier ?? '')
            .digest('base64url') === grant.challenge;
        if (
          body.client_id !== standIn.clientId ||
          body.client_secret !== standIn.clientSecret ||
          !grant ||
          !verifierOk ||
          body.redirect_uri !== grant.redirectUri
        ) {
          return send(200, { error: 'bad_verification_code' });
        }
        const token = `gho_${crypto.randomBytes(16).toString('hex')}`;
        standIn.tokens.set(token, grant.user);
        return send(200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      const user = standIn.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
        if (!user) return send(401, { message: 'Bad credentials' });
        if (url.pathname === '/user/emails') return send(200, user.emails);
        return send(200, {
          id: user.id,
          login: user.login,
          name: user.name,
          avatar_url: `https://avatars.example/${user.id}`,
          type: 'User',
        });
      }
      send(404, { message: 'Not Found' });
    })().catch((error: unknown) => res.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(standIn, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
