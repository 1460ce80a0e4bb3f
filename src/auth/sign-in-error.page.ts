// The page a failed GitHub sign-in ends on (auth.routes.ts).
import { escapeHtml } from '../text.ts';

/** `details`: HTML of ours (not escaped) below the message. */
export function errorPage(message: string, details = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in problem · OWASP community data</title><link rel="stylesheet" href="/static/site.css"></head>
<body><main class="page"><h1>Sign-in problem</h1><p role="alert">${escapeHtml(message)}</p>
${details}
<p><a href="/settings/api-keys">Back to API keys</a> · <a href="/">Home</a></p></main></body></html>`;
}

/**
 * What an instance without a GitHub OAuth app says instead of a sign-in link that would end on an error page: how an
 * operator enables it, and how to get a key meanwhile (the key page, web/api-keys.page.ts, says the same).
 */
export const GITHUB_NOT_CONFIGURED = `<p>Sign-in with GitHub is not configured on this server. Its operator enables it by
  setting <code>GITHUB_CLIENT_ID</code> and <code>GITHUB_CLIENT_SECRET</code> (a GitHub OAuth app whose callback is
  <code>/auth/github/callback</code> on this server); see the repository's docs/api.md, "API keys, sign-in and
  GraphQL".</p>
  <p>Meanwhile an operator creates a user and a key from the command line:
  <code>npx cds users create LOGIN --key NAME</code> prints the key once.</p>`;
