// GET /settings/api-keys. Who is signed in is rendered here; the keys themselves are listed,
// created and revoked by /static/api-keys.js through GraphQL, like any other client would.
import type { SessionUser } from '../auth/sessions.queries.ts';
import { GITHUB_NOT_CONFIGURED } from '../auth/sign-in-error.page.ts';
import { escapeHtml } from '../text.ts';
import { layout } from './layout.ts';

export const SIGN_IN_URL = '/auth/github/login?next=/settings/api-keys';

const intro = `<h1>API keys</h1>
<p class="lead">An API key authenticates your requests to the REST API: send it in the <code>X-API-Key</code> header.
Keys are personal; keep them secret.</p>`;

/** AUTH_DEV_LOGIN=true (never in production): one click signs in as a local user, no GitHub app needed. */
const DEV_SIGN_IN = `<section class="card sign-in" aria-labelledby="dev-sign-in-title">
  <h2 id="dev-sign-in-title">Local sign-in (development)</h2>
  <p>This server runs with <code>AUTH_DEV_LOGIN=true</code>: sign in as a local user, created on first use.</p>
  <form id="dev-sign-in" novalidate>
    <label for="dev-login">Login</label>
    <input id="dev-login" name="login" type="text" value="me" maxlength="39" required autocomplete="off" spellcheck="false">
    <div id="dev-sign-in-status" class="status" role="status" aria-live="polite"></div>
    <p><button type="submit" class="button primary">Sign in locally</button></p>
  </form>
</section>`;

function signedOut(devLogin: boolean, github: boolean): string {
  const how = github
    ? `<p>You need a GitHub account. Only your public profile and your verified primary e-mail address are read;
  the address is never published.</p>
  <p><a class="button primary" href="${escapeHtml(SIGN_IN_URL)}">Sign in with GitHub</a></p>`
    : GITHUB_NOT_CONFIGURED;
  return `${intro}
${devLogin ? DEV_SIGN_IN : ''}
<section class="card sign-in" aria-labelledby="sign-in-title">
  <h2 id="sign-in-title">Sign in to manage your keys</h2>
  ${how}
</section>`;
}

function account(user: SessionUser): string {
  const avatar = /^https:\/\//.test(user.avatar_url)
    ? `<img class="avatar" src="${escapeHtml(user.avatar_url)}" alt="" width="40" height="40" referrerpolicy="no-referrer">`
    : '';
  const name = user.name.trim() || user.login;
  return `<section class="card account" aria-label="Your account">
  ${avatar}
  <p class="who"><span class="who-label">Signed in as</span> <strong>${escapeHtml(name)}</strong>
  <span class="login">@${escapeHtml(user.login)}</span></p>
  <button type="button" class="secondary" id="sign-out">Sign out</button>
</section>`;
}

const NEW_KEY = `<section class="card new-key" id="new-key" hidden aria-labelledby="new-key-title">
  <h2 id="new-key-title">Your new API key</h2>
  <p class="warning"><span class="icon" aria-hidden="true">!</span>
  <span><strong>Copy it now: it will not be shown again.</strong> Only a one-way digest of it is stored, so it cannot be recovered.</span></p>
  <label for="new-key-value">API key</label>
  <div class="copy-row">
    <input id="new-key-value" type="text" readonly spellcheck="false" autocomplete="off">
    <button type="button" class="primary" data-copy="new-key-value">Copy</button>
    <span class="copy-status" role="status"></span>
  </div>
  <label for="curl-example">Try it</label>
  <div class="copy-row">
    <textarea id="curl-example" class="code" rows="3" readonly spellcheck="false"></textarea>
    <button type="button" class="secondary" data-copy="curl-example">Copy command</button>
    <span class="copy-status" role="status"></span>
  </div>
  <p><button type="button" class="secondary" id="new-key-done">I have copied it, hide the key</button></p>
</section>`;

const KEYS = `<section class="card" aria-labelledby="keys-title">
  <h2 id="keys-title" tabindex="-1">Active keys</h2>
  <p id="key-count" class="muted">Loading your keys…</p>
  <div id="keys-status" class="status" role="status" aria-live="polite"></div>
  <div class="table-wrap">
    <table id="keys-table">
      <thead><tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody id="keys-body"></tbody>
    </table>
  </div>
  <noscript><p>This page needs JavaScript to list, create and revoke keys.</p></noscript>
</section>`;

// Keys GitHub's secret scanning found published (issue 30): revoked at once; filled by /static/key-list.js.
const LEAKED = `<section class="card" id="leaked-keys" hidden aria-labelledby="leaked-title">
  <h2 id="leaked-title">Keys found published</h2>
  <p class="warning"><span class="icon" aria-hidden="true">!</span>
  <span>GitHub found these keys in public code and reported them; they were revoked at once. Remove them from where
  they were published and use a new key.</span></p>
  <ul id="leaked-list"></ul>
</section>`;

const CREATE = `<section class="card" aria-labelledby="create-title">
  <h2 id="create-title">Create a key</h2>
  <form id="create-form" novalidate>
    <!-- Disabled as a whole while the user holds the most keys (key-list.js). -->
    <fieldset id="create-fields" class="bare" aria-describedby="key-count">
    <div class="form-row">
      <div class="field wide">
        <label for="key-name">Name</label>
        <input id="key-name" name="name" type="text" maxlength="100" required autocomplete="off" aria-describedby="key-name-hint">
        <p class="hint" id="key-name-hint">Up to 100 characters, for example where the key is used.</p>
        <p class="field-error" id="key-name-error" hidden></p>
      </div>
      <div class="field">
        <label for="key-expiry">Expires</label>
        <select id="key-expiry" name="expiry">
          <option value="30">In 30 days</option>
          <option value="90">In 90 days</option>
          <option value="365">In 1 year</option>
          <option value="custom">On a date I choose…</option>
        </select>
      </div>
      <div class="field" id="key-date-field" hidden>
        <label for="key-date">Expiry date</label>
        <input id="key-date" name="date" type="date" disabled>
        <p class="field-error" id="key-date-error" hidden></p>
      </div>
    </div>
    <div id="create-status" class="status" role="status" aria-live="polite"></div>
    <p><button type="submit" class="primary">Create key</button></p>
    </fieldset>
  </form>
</section>`;

const ROTATE_DIALOG = `<dialog id="rotate-dialog" aria-labelledby="rotate-title" aria-describedby="rotate-text">
  <h2 id="rotate-title">Rotate this key?</h2>
  <p id="rotate-text">“<span id="rotate-name"></span>” is replaced by a new key with the same name and expiry, shown once.
  The old key keeps working for the grace period you choose, time to deploy the new one, then stops.</p>
  <label for="rotate-grace">Old key keeps working for</label>
  <select id="rotate-grace">
    <option value="0">No time: stop it now</option>
    <option value="1">1 hour</option>
    <option value="24" selected>24 hours</option>
    <option value="168">7 days</option>
  </select>
  <div class="dialog-actions">
    <button type="button" class="secondary" value="cancel" autofocus>Cancel</button>
    <button type="button" class="primary" value="rotate">Rotate key</button>
  </div>
</dialog>`;

const REVOKE_DIALOG = `<dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-text">
  <h2 id="revoke-title">Revoke this key?</h2>
  <p id="revoke-text">Requests that use “<span id="revoke-name"></span>” will be refused from now on. This cannot be undone.</p>
  <div class="dialog-actions">
    <button type="button" class="secondary" value="cancel" autofocus>Cancel</button>
    <button type="button" class="danger solid" value="revoke">Revoke key</button>
  </div>
</dialog>`;

export function apiKeysPage(
  user: SessionUser | undefined,
  options: { devLogin?: boolean; github?: boolean } = {},
): string {
  if (!user) {
    const devLogin = options.devLogin === true;
    return layout({
      title: 'API keys · OWASP community data',
      current: 'keys',
      main: signedOut(devLogin, options.github === true),
      scripts: devLogin ? ['/static/dev-login.js'] : [],
    });
  }
  return layout({
    title: 'API keys · OWASP community data',
    current: 'keys',
    scripts: ['/static/api-keys.js'],
    main: `${intro}
${account(user)}
<div id="status" class="status" role="status" aria-live="polite"></div>
${NEW_KEY}
${LEAKED}
${KEYS}
${CREATE}
${REVOKE_DIALOG}
${ROTATE_DIALOG}`,
  });
}
