// The page a failed GitHub sign-in ends on (auth.routes.ts).
import { escapeHtml } from '../http/html.ts';

export function errorPage(message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in problem · OWASP community data</title><link rel="stylesheet" href="/static/site.css"></head>
<body><main class="page"><h1>Sign-in problem</h1><p role="alert">${escapeHtml(message)}</p>
<p><a href="/settings/api-keys">Back to API keys</a></p></main></body></html>`;
}
