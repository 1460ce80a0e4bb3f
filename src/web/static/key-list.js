/* global document */
// The table of active keys, filled from GetApiKeys plus the lastUsedAt of each key.
import { DOCUMENTS, graphql } from './server.js';
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

function keyRow(key, lastUsed) {
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
  actions.append(revoke);
  let used;
  if (lastUsed.has(key.uuid)) {
    used = timeCell(lastUsed.get(key.uuid), dateTimeFormat);
  } else {
    used = document.createElement('td');
    used.textContent = 'unknown';
  }
  const cells = [timeCell(key.createdAt, dateFormat), timeCell(key.expiresAt, dateFormat), used];
  // Shown as the cells' captions where the table is laid out as blocks on narrow screens.
  cells.forEach((cell, index) => (cell.dataset.label = ['Created', 'Expires', 'Last used'][index]));
  row.append(name, ...cells, actions);
  return row;
}

async function loadKeys() {
  const [list, usage] = await Promise.all([
    graphql(DOCUMENTS.getApiKeys),
    // Only the "last used" column depends on it: the list still shows when it fails.
    graphql(DOCUMENTS.keyUsage).catch(() => null),
  ]);
  const lastUsed = new Map(usage ? usage.apiKeys.map((key) => [key.uuid, key.lastUsedAt]) : []);
  const count = list.activeApiKeyCount;
  $('key-count').textContent =
    `You have ${count} of ${MAX_KEYS} active keys.` + (count >= MAX_KEYS ? ' Revoke one to create another.' : '');
  const rows = list.apiKeys.filter((key) => !key.isRevoked).map((key) => keyRow(key, lastUsed));
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
