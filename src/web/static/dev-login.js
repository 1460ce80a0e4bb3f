/* global document, location, sessionStorage */
// The local sign-in form of /settings/api-keys, shown only with AUTH_DEV_LOGIN=true: POST /auth/dev/login, then reload.
import { post } from './graphql-client.js';
import { $, FOCUS_AFTER_RELOAD } from './messages.js';

$('dev-sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  const status = $('dev-sign-in-status');
  status.textContent = 'Signing in…';
  try {
    const response = await post('/auth/dev/login', { login: $('dev-login').value.trim() });
    if (response.ok) {
      // The page comes back signed in: the keyboard goes on from its key list, not from the top (api-keys.js).
      sessionStorage.setItem(FOCUS_AFTER_RELOAD, 'keys-title');
      location.reload();
      return;
    }
    status.textContent =
      response.status === 400
        ? 'A login is 1 to 39 letters, digits or inner hyphens.'
        : `Sign-in failed (${response.status}).`;
  } catch {
    status.textContent = 'The server could not be reached.';
  }
});
document.documentElement.dataset.devLogin = 'ready';
