/* global document */
// Messages for the user: the live regions, field errors, and one plain sentence per error code.
import { UiError } from './graphql-client.js';

export const MAX_KEYS = 3;
/** sessionStorage: the id of the element a page that reloads itself gives the focus to once it is back. */
export const FOCUS_AFTER_RELOAD = 'cds-focus-after-reload';
const SIGN_IN = { href: '/auth/github/login?next=/settings/api-keys', text: 'Sign in with GitHub' };

export const MESSAGES = {
  INVALID_NAME: 'Enter a name of 1 to 100 characters.',
  INVALID_DATE: 'Choose an expiry date in the future.',
  LIMIT_REACHED: `You already have ${MAX_KEYS} active keys, the most allowed. Revoke one before creating another.`,
  NOT_FOUND: 'That key was not found: it may have expired or been revoked already. The list is now up to date.',
  INVALID_GRACE_PERIOD: 'Choose a grace period of 0 to 168 hours.',
  NOT_ACTIVE: 'Only an active key can be rotated. The list is now up to date.',
  ALREADY_ROTATED: 'That key was already rotated: rotate its replacement instead. The list is now up to date.',
  UNAUTHORIZED: 'Your session has ended, sign in again.',
  FORBIDDEN: 'Your session could not be verified. Reload the page and try again.',
  NETWORK: 'The server could not be reached. Check your connection and try again.',
};

export const $ = (id) => document.getElementById(id);

function icon(text) {
  const span = document.createElement('span');
  span.className = 'icon';
  span.setAttribute('aria-hidden', 'true');
  span.textContent = text;
  return span;
}

// Live regions next to what they report on, so a message is seen where the user is looking:
// the top of the page, the list of keys, the create form. One message at a time.
const REGIONS = ['status', 'keys-status', 'create-status'];

/** The kind of a message is shown by an icon and a border, not by colour alone. */
export function announce(kind, text, link, region = 'status') {
  for (const id of REGIONS) {
    $(id).className = 'status';
    $(id).replaceChildren();
  }
  if (!text) return;
  const status = $(region);
  status.className = `status ${kind}`;
  const message = document.createElement('span');
  message.textContent = text;
  if (link) {
    const anchor = document.createElement('a');
    anchor.href = link.href;
    anchor.textContent = link.text;
    message.append(' ', anchor);
  }
  status.append(icon(kind === 'error' ? '!' : kind === 'success' ? '✓' : 'i'), message);
}

export function showError(error, region) {
  if (!(error instanceof UiError)) {
    console.error(error);
    announce('error', 'Something unexpected went wrong. Reload the page and try again.', undefined, region);
  } else if (error.code === 'UNAUTHORIZED') {
    announce('error', MESSAGES.UNAUTHORIZED, SIGN_IN, region);
  } else if (MESSAGES[error.code]) {
    announce('error', MESSAGES[error.code], undefined, region);
  } else {
    announce('error', `Something went wrong (${error.message}). Please try again.`, undefined, region);
  }
}

export function showFieldError(inputId, message) {
  const input = $(inputId);
  const error = $(`${inputId}-error`);
  error.replaceChildren(icon('!'), document.createTextNode(message));
  error.hidden = false;
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', [input.dataset.hint, error.id].filter(Boolean).join(' '));
  // No live-region copy: the error is read with the field, which takes focus.
  announce();
  input.focus();
}

export function clearFieldErrors() {
  for (const input of [$('key-name'), $('key-date')]) {
    $(`${input.id}-error`).hidden = true;
    input.removeAttribute('aria-invalid');
    if (input.dataset.hint) input.setAttribute('aria-describedby', input.dataset.hint);
    else input.removeAttribute('aria-describedby');
  }
}
