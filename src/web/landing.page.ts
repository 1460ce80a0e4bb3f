// GET /: what the service is and where to go next.
import { escapeHtml } from '../text.ts';
import { layout } from './layout.ts';
import { RESOURCE_GROUPS } from '../api/v0/resources.ts';

/** Each list, a link to its operation in the API docs (`docs`: the docs' address of a resource's list). */
const resourceLinks = (resources: readonly { name: string }[], docs: (name: string) => string) =>
  resources
    .map(({ name }) => `<li><a href="${escapeHtml(docs(name))}"><code>/api/v0/${name}/</code></a></li>`)
    .join('');

/** Step 1 as this server offers it: GitHub's sign-in only where it is configured (issue 45). */
function firstStep(signIn: { github: boolean; devLogin: boolean }): string {
  if (signIn.github)
    return '<a href="/settings/api-keys">Sign in with GitHub and create an API key</a>. You can hold up to three at a time.';
  if (signIn.devLogin)
    return '<a href="/settings/api-keys">Sign in locally and create an API key</a>. You can hold up to three at a time.';
  return (
    'Get an API key from the operator of this service (<code>npx cds users create LOGIN --key NAME</code> on the ' +
    'server; <a href="/settings/api-keys">how to enable sign-in</a>).'
  );
}

/**
 * `origin` is where this service is reached (PUBLIC_URL or the request's host), for the example; `docs` the address
 * of a resource's list in the API docs; `signIn` the ways of signing in this server offers.
 */
export function landingPage(
  origin: string,
  docs: (name: string) => string,
  signIn: { github: boolean; devLogin: boolean },
): string {
  const example = `curl -H "X-API-Key: YOUR_KEY" ${origin}/api/v0/chapters/`;
  return layout({
    title: 'OWASP community data API',
    current: 'home',
    main: `
<section class="hero">
  <h1>OWASP community data API</h1>
  <p class="lead">A read-only REST API over the OWASP community's public data: its chapters, committees,
  events, projects and sponsors, with mirrored GitHub records of its organizations and repositories.</p>
  <p class="actions">
    <a class="button primary" href="/settings/api-keys">Get an API key</a>
    <a class="button secondary" href="/api/v0/docs">Read the API docs</a>
    <a class="button secondary" href="/map">See chapters and events on a map</a>
  </p>
</section>

<section class="card" aria-labelledby="start-title">
  <h2 id="start-title">Getting started</h2>
  <ol class="steps">
    <li>${firstStep(signIn)}</li>
    <li>Send the key in the <code>X-API-Key</code> header of every request:
      <pre class="code"><code>${escapeHtml(example)}</code></pre></li>
    <li>Browse the operations, filters and response shapes in the <a href="/api/v0/docs">interactive API docs</a>
      (or fetch the <a href="/api/v0/openapi.json">OpenAPI document</a>).</li>
  </ol>
</section>

<div class="columns">
  <section class="card" aria-labelledby="community-title">
    <h2 id="community-title">Community records</h2>
    <ul class="plain">${resourceLinks(RESOURCE_GROUPS.community, docs)}</ul>
  </section>
  <section class="card" aria-labelledby="github-title">
    <h2 id="github-title">Mirrored GitHub records</h2>
    <ul class="plain">${resourceLinks(RESOURCE_GROUPS.github, docs)}</ul>
  </section>
</div>`,
  });
}
