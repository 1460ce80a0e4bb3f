/* global document, navigator, location, sessionStorage */
// The behaviour of /settings/api-keys: creating, copying and revoking keys, and signing out.
// No framework and no build step. Text from the server is only ever set with textContent or value,
// never parsed as HTML.
import { DOCUMENTS, UiError, graphql, post } from './graphql-client.js';
import { $, FOCUS_AFTER_RELOAD, MESSAGES, announce, clearFieldErrors, showError, showFieldError } from './messages.js';
import { refresh } from './key-list.js';

const MAX_NAME_LENGTH = 100;
const DAY_MS = 86_400_000;

// ---- Creating a key --------------------------------------------------------------------------

function localDate(date) {
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function syncExpiryFields() {
  const custom = $('key-expiry').value === 'custom';
  $('key-date-field').hidden = !custom;
  $('key-date').disabled = !custom;
  $('key-date').min = localDate(new Date(Date.now() + DAY_MS));
}

/** The chosen expiry as an ISO timestamp, or null when the chosen date is missing or past. */
function chosenExpiry() {
  const choice = $('key-expiry').value;
  if (choice !== 'custom') return new Date(Date.now() + Number(choice) * DAY_MS).toISOString();
  const value = $('key-date').value;
  if (!/^\d{4}-\d\d-\d\d$/.test(value)) return null;
  // The key stays valid through the whole chosen day, in the user's time zone.
  const end = new Date(`${value}T23:59:59`);
  return end.getTime() > Date.now() ? end.toISOString() : null;
}

function showNewKey(rawKey) {
  $('new-key-value').value = rawKey;
  $('curl-example').value = `curl -H "X-API-Key: ${rawKey}" ${location.origin}/api/v0/chapters/`;
  for (const status of $('new-key').querySelectorAll('.copy-status')) status.textContent = '';
  $('new-key').hidden = false;
}

function hideNewKey() {
  $('new-key-value').value = '';
  $('curl-example').value = '';
  $('new-key').hidden = true;
}

let busy = false;

async function createKey(event) {
  event.preventDefault();
  if (busy) return;
  clearFieldErrors();
  const name = $('key-name').value.trim();
  if (name.length === 0 || [...name].length > MAX_NAME_LENGTH) return showFieldError('key-name', MESSAGES.INVALID_NAME);
  const expiresAt = chosenExpiry();
  if (!expiresAt) return showFieldError('key-date', MESSAGES.INVALID_DATE);
  const submit = $('create-form').querySelector('button[type="submit"]');
  busy = true;
  submit.textContent = 'Creating…';
  try {
    const { createApiKey: result } = await graphql(DOCUMENTS.createApiKey, { name, expiresAt }, { freshToken: true });
    if (!result.ok) {
      if (result.code === 'INVALID_NAME') return showFieldError('key-name', MESSAGES.INVALID_NAME);
      if (result.code === 'INVALID_DATE' && $('key-expiry').value === 'custom')
        return showFieldError('key-date', MESSAGES.INVALID_DATE);
      return showError(new UiError(result.code, result.message), 'create-status');
    }
    $('create-form').reset();
    syncExpiryFields();
    showNewKey(result.rawKey);
    announce('success', `Key “${result.apiKey.name}” created. Copy it now: it will not be shown again.`);
    $('new-key-value').focus();
    await refresh();
  } catch (error) {
    showError(error, 'create-status');
  } finally {
    busy = false;
    submit.textContent = 'Create key';
  }
}

async function copyFrom(button) {
  const source = $(button.dataset.copy);
  const status = button.parentElement.querySelector('.copy-status');
  status.textContent = '';
  let copied = false;
  try {
    await navigator.clipboard.writeText(source.value);
    copied = true;
  } catch {
    // No Clipboard API (an http:// origin) or permission refused: select the text instead.
  }
  if (!copied) {
    source.focus();
    source.select();
    try {
      copied = document.execCommand('copy');
    } catch {
      copied = false;
    }
  }
  status.textContent = copied ? 'Copied' : 'Selected: press Ctrl+C (⌘C on a Mac) to copy';
}

// ---- Revoking a key --------------------------------------------------------------------------

let pending = null;

/** Opens the dialog that asks to confirm `action` (revoke, rotate) on the key of `button`; returns the choice. */
function confirmAction(action, uuid, button) {
  const choice = { uuid, name: button.dataset.name, button };
  $(`${action}-name`).textContent = choice.name;
  const dialog = $(`${action}-dialog`);
  dialog.returnValue = '';
  dialog.showModal();
  return choice;
}

function askToRevoke(button) {
  pending = confirmAction('revoke', button.dataset.uuid, button);
}

async function revokeKey({ uuid, name, button }) {
  if (busy) return;
  busy = true;
  const label = [...button.childNodes];
  button.textContent = 'Revoking…';
  try {
    const { revokeApiKey: result } = await graphql(DOCUMENTS.revokeApiKey, { uuid }, { freshToken: true });
    const listed = await refresh();
    if (!result.ok) showError(new UiError(result.code, result.message), 'keys-status');
    else if (listed)
      announce('success', `Key “${name}” revoked. Requests that use it are now refused.`, undefined, 'keys-status');
    // The row and its button are gone: keep the keyboard user in the list rather than at the top.
    $('keys-title').focus();
  } catch (error) {
    showError(error, 'keys-status');
  } finally {
    busy = false;
    if (button.isConnected) button.replaceChildren(...label);
  }
}

function onDialogClose() {
  const dialog = $('revoke-dialog');
  const choice = pending;
  pending = null;
  if (!choice) return;
  if (dialog.returnValue === 'revoke') revokeKey(choice);
  else choice.button.focus();
}

// ---- Rotating a key --------------------------------------------------------------------------

let rotating = null;

function askToRotate(button) {
  rotating = confirmAction('rotate', button.dataset.rotate, button);
}

async function rotateKey({ uuid, name, button }) {
  if (busy) return;
  busy = true;
  const hours = Number($('rotate-grace').value);
  try {
    const { rotateApiKey: result } = await graphql(DOCUMENTS.rotateApiKey, { uuid, hours }, { freshToken: true });
    if (!result.ok) {
      await refresh();
      return showError(new UiError(result.code, result.message), 'keys-status');
    }
    showNewKey(result.rawKey);
    const old =
      hours === 0 ? 'The old key is revoked.' : `The old key keeps working for ${hours} hour${hours === 1 ? '' : 's'}.`;
    announce('success', `Key “${name}” rotated. Copy the new key now: it will not be shown again. ${old}`);
    $('new-key-value').focus();
    await refresh();
  } catch (error) {
    showError(error, 'keys-status');
    if (button.isConnected) button.focus();
  } finally {
    busy = false;
  }
}

function onRotateDialogClose() {
  const dialog = $('rotate-dialog');
  const choice = rotating;
  rotating = null;
  if (!choice) return;
  if (dialog.returnValue === 'rotate') rotateKey(choice);
  else choice.button.focus();
}

// ---- Signing out -----------------------------------------------------------------------------

async function signOut() {
  try {
    const response = await post('/auth/logout', undefined, { freshToken: true });
    if (response.status === 403) throw new UiError('FORBIDDEN');
    if (!response.ok) throw new UiError('HTTP', `HTTP ${response.status}`);
    location.reload();
  } catch (error) {
    showError(error);
  }
}

// ---- Wiring ----------------------------------------------------------------------------------

function hideBrokenAvatar() {
  const avatar = document.querySelector('.account .avatar');
  if (!avatar) return;
  const hide = () => (avatar.hidden = true);
  if (avatar.complete && avatar.naturalWidth === 0) hide();
  else avatar.addEventListener('error', hide);
}

function start() {
  for (const input of [$('key-name'), $('key-date')]) input.dataset.hint = input.getAttribute('aria-describedby') || '';
  hideBrokenAvatar();
  syncExpiryFields();
  $('key-expiry').addEventListener('change', syncExpiryFields);
  $('create-form').addEventListener('submit', createKey);
  $('sign-out').addEventListener('click', signOut);
  $('new-key-done').addEventListener('click', () => {
    hideNewKey();
    announce('info', 'The new key is hidden. Only its name stays listed.', undefined, 'keys-status');
    $('keys-title').focus();
  });
  for (const button of document.querySelectorAll('[data-copy]'))
    button.addEventListener('click', () => copyFrom(button));
  $('keys-body').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-uuid]');
    if (button) askToRevoke(button);
    const rotate = event.target.closest('button[data-rotate]');
    if (rotate) askToRotate(rotate);
  });
  const dialog = $('revoke-dialog');
  for (const button of dialog.querySelectorAll('button'))
    button.addEventListener('click', () => dialog.close(button.value));
  dialog.addEventListener('close', onDialogClose);
  const rotateDialog = $('rotate-dialog');
  for (const button of rotateDialog.querySelectorAll('button'))
    button.addEventListener('click', () => rotateDialog.close(button.value));
  rotateDialog.addEventListener('close', onRotateDialogClose);
  refresh();
  focusAfterReload();
}

/** After the local sign-in's reload (dev-login.js), the focus where it asked, not on the page's top. */
function focusAfterReload() {
  const id = sessionStorage.getItem(FOCUS_AFTER_RELOAD);
  if (id === null) return;
  sessionStorage.removeItem(FOCUS_AFTER_RELOAD);
  $(id)?.focus();
}

start();
