// The shell shared by the web pages: head, site header, footer with the data attribution.
// Pages carry no inline script or style, so the Content-Security-Policy can forbid both.
import { escapeHtml } from '../text.ts';

export interface LayoutOptions {
  title: string;
  /** Which navigation entry is the current page. */
  current?: 'home' | 'map' | 'health' | 'keys';
  /** Trusted HTML: every value interpolated into it has been escaped by the caller. */
  main: string;
  scripts?: string[];
}

const NAV = [
  { id: 'home', href: '/', label: 'Home' },
  { id: 'map', href: '/map', label: 'Map' },
  { id: 'health', href: '/health', label: 'Health' },
  { id: 'docs', href: '/api/v0/docs', label: 'API docs' },
  { id: 'keys', href: '/settings/api-keys', label: 'API keys' },
] as const;

function nav(current: LayoutOptions['current']): string {
  return NAV.map(
    ({ id, href, label }) => `<li><a href="${href}"${id === current ? ' aria-current="page"' : ''}>${label}</a></li>`,
  ).join('');
}

export const ATTRIBUTION_HTML =
  'Data © OWASP Foundation and the contributors to ' +
  '<a href="https://github.com/OWASP/owasp.github.io">OWASP/owasp.github.io</a>, used under ' +
  '<a href="https://creativecommons.org/licenses/by-sa/4.0/" rel="license">CC BY-SA 4.0</a>. ' +
  'Sample GitHub records from the octokit/fixtures, octokit/octokit.rb and octokit/webhooks projects, MIT License. ' +
  'Coordinates of places from <a href="https://www.geonames.org/">GeoNames</a> (CC BY 4.0) and Natural Earth (public domain). ' +
  "Records derived from the OWASP website's data are shared under the same licence as it.";

export function layout({ title, current, main, scripts = [] }: LayoutOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<meta name="description" content="The public API of the OWASP community data: chapters, committees, events, projects, sponsors and mirrored GitHub records.">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/site.css">
${scripts.map((src) => `<script type="module" src="${escapeHtml(src)}"></script>`).join('\n')}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <div class="site-header-inner">
    <a class="brand" href="/"><img src="/static/favicon.svg" alt="" width="28" height="28"><span>OWASP community data</span></a>
    <nav aria-label="Main"><ul>${nav(current)}</ul></nav>
  </div>
</header>
<main id="main" class="page" tabindex="-1">
${main}
</main>
<footer class="site-footer"><p>${ATTRIBUTION_HTML}</p></footer>
</body>
</html>
`;
}
