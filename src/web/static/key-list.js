/* global document */
// The table of active keys, filled from GetApiKeys plus the lastUsedAt of each key.
import { DOCUMENTS, graphql } from './graphql-client.js';
import { $, MAX_KEYS, showError } from './messages.js';

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function timeCell(iso, format) {
  const cell = document.createElement('td');
  if (!iso) {
    cell.textContent = 'never';
    return cell;
  }
  const time = document.createElement('time');
  time.dateTime = iso;
  time.title = new Date(iso).toISOString();
  time.textContent = format.format(new Date(iso));
  cell.append(time);
  return cell;
}

/** The expiry, flagged when it is within 7 days (the server's `expiresSoon`). */
function expiryCell(key, soon) {
  const cell = timeCell(key.expiresAt, dateFormat);
  if (soon) {
    const badge = document.createElement('span');
    badge.className = 'badge';
    badge.textContent = 'expires soon';
    cell.append(' ', badge);
  }
  return cell;
}

function keyRow(key, lastUsed, expiringSoon) {
  const row = document.createElement('tr');
  const name = document.createElement('th');
  name.scope = 'row';
  name.textContent = key.name;
  const actions = document.createElement('td');
  actions.className = 'actions';
  const revoke = document.createElement('button');
  revoke.type = 'button';
  revoke.className = 'danger small';
  revoke.dataset.uuid = key.uuid;
  revoke.dataset.name = key.name;
  const hidden = document.createElement('span');
  hidden.className = 'visually-hidden';
  hidden.textContent = ` key “${key.name}”`;
  revoke.append('Revoke', hidden);
  const rotate = document.createElement('button');
  rotate.type = 'button';
  rotate.className = 'secondary small';
  rotate.dataset.rotate = key.uuid;
  rotate.dataset.name = key.name;
  const rotateHidden = hidden.cloneNode(true);
  rotate.append('Rotate', rotateHidden);
  actions.append(rotate, ' ', revoke);
  let used;
  if (lastUsed.has(key.uuid)) {
    used = timeCell(lastUsed.get(key.uuid), dateTimeFormat);
  } else {
    used = document.createElement('td');
    used.textContent = 'unknown';
  }
  const cells = [timeCell(key.createdAt, dateFormat), expiryCell(key, expiringSoon.has(key.uuid)), used];
  // Shown as the cells' captions where the table is laid out as blocks on narrow screens.
  cells.forEach((cell, index) => (cell.dataset.label = ['Created', 'Expires', 'Last used'][index]));
  row.append(name, ...cells, actions);
  return row;
}

async function loadKeys() {
  const [list, usage, leaks] = await Promise.all([
    graphql(DOCUMENTS.getApiKeys),
    // Only the "last used" column and the "expires soon" flags depend on it: the list still shows when it fails.
    graphql(DOCUMENTS.keyUsage).catch(() => null),
    graphql(DOCUMENTS.leakedApiKeys).catch(() => null),
  ]);
  const lastUsed = new Map(usage ? usage.apiKeys.map((key) => [key.uuid, key.lastUsedAt]) : []);
  const expiringSoon = new Set(usage ? usage.apiKeys.filter((key) => key.expiresSoon).map((key) => key.uuid) : []);
  showLeaks(leaks ? leaks.leakedApiKeys : []);
  const count = list.activeApiKeyCount;
  $('key-count').textContent =
    `You have ${count} of ${MAX_KEYS} active keys.` +
    (count >= MAX_KEYS ? ' Revoke one to create another (or rotate one to replace it).' : '');
  // At the most keys the form could only fail: it is disabled (the count above says why) until one is revoked.
  $('create-fields').disabled = count >= MAX_KEYS;
  const rows = list.apiKeys.filter((key) => !key.isRevoked).map((key) => keyRow(key, lastUsed, expiringSoon));
  if (rows.length === 0) {
    const row = document.createElement('tr');
    const cell = document.createElement('td');
    cell.colSpan = 5;
    cell.className = 'empty';
    cell.textContent = 'No active keys yet. Create one below.';
    row.append(cell);
    rows.push(row);
  }
  $('keys-body').replaceChildren(...rows);
}

/** Keys GitHub found published (and that were revoked for it): "revoked: published at URL". */
function showLeaks(leaked) {
  const section = $('leaked-keys');
  section.hidden = leaked.length === 0;
  const items = leaked.map((key) => {
    const item = document.createElement('li');
    const name = document.createElement('strong');
    name.textContent = key.name;
    item.append(name, ' revoked: published at ');
    // Only a web address becomes a link; anything else stays text.
    if (/^https:\/\//.test(key.leakUrl || '')) {
      const link = document.createElement('a');
      link.href = key.leakUrl;
      link.rel = 'noopener noreferrer';
      link.textContent = key.leakUrl;
      item.append(link);
    } else {
      item.append(key.leakUrl || 'an unknown address');
    }
    if (key.leakReportedAt) item.append(` (reported ${dateTimeFormat.format(new Date(key.leakReportedAt))})`);
    return item;
  });
  $('leaked-list').replaceChildren(...items);
}

/** Reloads the list; on failure says so and returns false. */
export async function refresh() {
  try {
    await loadKeys();
    return true;
  } catch (error) {
    $('key-count').textContent = 'Your keys could not be loaded.';
    showError(error, 'keys-status');
    return false;
  }
}
