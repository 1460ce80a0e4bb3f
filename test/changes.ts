// The change log's tests read it as a client does (issue 43): every change after an id, oldest first, page by page;
// and the details its `url`s name, to hold `changed_fields` to what the API shows.
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { isLoggedResource, type Change } from '../src/changes/change-log.ts';
import { readChanges } from '../src/changes/change-log.queries.ts';
import type { Db } from '../src/db/index.ts';
import { buildDumps } from '../src/dumps/dumps.build.ts';
import { DUMPS } from '../src/api/v0/resources.ts';
import type { TestApp } from './app.ts';

/** Every change after `after` (0: all), oldest first. */
export async function changesAfter(db: Db, after = 0): Promise<Change[]> {
  const changes: Change[] = [];
  for (;;) {
    const page = await readChanges(db, { after: changes.at(-1)?.id ?? after }, 500);
    changes.push(...page);
    if (page.length < 500) return changes;
  }
}

/**
 * Every change after `after` through the pull feed (`GET /api/v0/changes/`), following `Link: next`, as a client
 * does once its poll interval has passed: by then the instance has noticed the data version of what was written (by
 * another process: the syncs here), which the test makes it do at once.
 */
export async function feedAfter(t: TestApp, after = 0): Promise<Change[]> {
  await t.app.shared.watcher.refresh();
  const changes: Change[] = [];
  let next: string | undefined = `/api/v0/changes/?after=${after}&limit=100`;
  while (next) {
    const res: { statusCode: number; body: string; headers: Record<string, unknown>; json(): unknown } =
      await t.app.inject({ method: 'GET', url: next });
    assert.equal(res.statusCode, 200, `${next}: ${res.body}`);
    changes.push(...(res.json() as { items: Change[] }).items);
    next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1]?.replace(/^https?:\/\/[^/]+/, '');
  }
  return changes;
}

/** `type key` of each change, sorted: what a set of changes says happened. */
export const summary = (changes: readonly Change[]) => changes.map((c) => `${c.type} ${c.key}`).sort();

/** A record's detail as the API answers it now (undefined when 404). */
export async function detailOf(t: TestApp, url: string): Promise<Record<string, unknown> | undefined> {
  const res = await t.app.inject({ method: 'GET', url });
  if (res.statusCode === 404) return undefined;
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json();
}

/** The top-level fields whose values differ between two answers of one detail, sorted. */
export function differingFields(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name])).sort();
}

/**
 * What every change must be, read back: ids increasing; a `created` or `updated` record's detail answers (200), a
 * `deleted` one's does not (404) unless a later change of the same record brought it back; `changed_fields` on updates
 * only. Labels have no detail (`url` null).
 */
export async function checkReadBack(t: TestApp, changes: readonly Change[]): Promise<void> {
  for (const [i, change] of changes.entries()) {
    if (i > 0) assert.ok(change.id > changes[i - 1]!.id, 'ids increase');
    assert.equal(change.changed_fields !== null, change.type.endsWith('.updated'), JSON.stringify(change));
    if (change.resource === 'labels') {
      assert.equal(change.url, null);
      continue;
    }
    assert.ok(change.url?.startsWith(`/api/v0/${change.resource}/`), JSON.stringify(change));
    const last = changes.findLast((other) => other.resource === change.resource && other.key === change.key)!;
    if (last !== change) continue;
    const found = await detailOf(t, change.url!);
    assert.equal(found !== undefined, !change.type.endsWith('.deleted'), `${change.type} ${change.url}`);
  }
}

/** A full read: every record of every logged resource, by its identity (see identityOf), as its detail answers it. */
export interface FullRead {
  /** The dumps' manifest's `last_change_id`: the last change the read includes. */
  lastChangeId: number;
  records: Map<string, Record<string, unknown>>;
}

/**
 * A record's identity across the dumps and the log: `<resource>/<detail path>` (the change's `url`), and for labels
 * (no detail) `labels/<owner>/<name>/<label>` (their change's key).
 */
export function identityOf(change: Change): string {
  return change.url === null ? `${change.resource}/${change.key}` : change.url.slice('/api/v0/'.length);
}

/** Builds the dumps now and reads them back through the API: the full read of every logged resource. */
export async function fullRead(t: TestApp): Promise<FullRead> {
  assert.ok(t.config.dumpsDir, 'the test app has a DUMPS_DIR');
  await buildDumps({ database: t.database, dir: t.config.dumpsDir, dumps: DUMPS });
  const manifest = await t.app.inject({ method: 'GET', url: '/api/v0/dumps/' });
  assert.equal(manifest.statusCode, 200, manifest.body);
  const { last_change_id: lastChangeId, items } = manifest.json<{
    last_change_id: number;
    items: { resource: string; url: string }[];
  }>();
  const records = new Map<string, Record<string, unknown>>();
  for (const item of items) {
    if (!isLoggedResource(item.resource)) continue;
    const res = await t.app.inject({ method: 'GET', url: item.url });
    assert.equal(res.statusCode, 200, item.url);
    for (const line of zlib.gunzipSync(res.rawPayload).toString('utf8').split('\n').filter(Boolean)) {
      const { params, record } = JSON.parse(line) as {
        params: Record<string, string>;
        record: Record<string, unknown>;
      };
      const path = [...Object.values(params), ...(item.resource === 'labels' ? [String(record.name)] : [])];
      records.set(`${item.resource}/${path.join('/')}`, record);
    }
  }
  return { lastChangeId, records };
}

/**
 * A record as it is now, read by a client following a change: its detail. A label has none, and its list neither
 * names a label's repository nor filters by it: a mirror reads the labels from the next dumps (`labels`, here).
 */
async function readRecord(
  t: TestApp,
  change: Change,
  labels: ReadonlyMap<string, Record<string, unknown>>,
): Promise<Record<string, unknown> | undefined> {
  if (change.url === null) return labels.get(identityOf(change));
  return detailOf(t, change.url);
}

/**
 * What a mirror does with the changes after its copy: deleted records go, created and updated ones are read again
 * (labels from `labels`, see readRecord).
 */
export async function applyChanges(
  t: TestApp,
  copy: ReadonlyMap<string, Record<string, unknown>>,
  changes: readonly Change[],
  labels: ReadonlyMap<string, Record<string, unknown>>,
): Promise<Map<string, Record<string, unknown>>> {
  const records = new Map(copy);
  // The instance's response cache holds answers of the data version it last noticed (every second, or with Redis at
  // the next request): the feed of an instance lists the changes its details show. (A detail read from another
  // instance, which has not noticed yet, may be the old one, and nothing in it says so.)
  assert.ok(t.app.shared.watcher.version >= (changes.at(-1)?.data_version ?? 0));
  for (const change of changes) {
    const identity = identityOf(change);
    if (change.type.endsWith('.deleted')) {
      assert.ok(records.delete(identity), `${change.type} ${identity}: a record the mirror holds`);
      continue;
    }
    assert.equal(records.has(identity), change.type.endsWith('.updated'), `${change.type} ${identity}`);
    const record = await readRecord(t, change, labels);
    // Read now, the record may have gone since (a later change of the same batch deletes it).
    if (record) records.set(identity, record);
  }
  return records;
}

/**
 * The changes between two full reads, as a log must tell them: per record, `created`, `deleted`, or `updated` with the
 * fields whose values differ (`resource action identity [fields]`), sorted.
 */
export function expectedChanges(before: FullRead, after: FullRead): string[] {
  const found: string[] = [];
  for (const [identity, record] of after.records) {
    const was = before.records.get(identity);
    if (!was) found.push(`created ${identity}`);
    else {
      const fields = differingFields(was, record);
      if (fields.length > 0) found.push(`updated ${identity} ${fields.join(',')}`);
    }
  }
  for (const identity of before.records.keys()) if (!after.records.has(identity)) found.push(`deleted ${identity}`);
  return found.sort();
}

/** The same, told by the log: several changes of one record in one batch are one (their fields together). */
export function toldChanges(changes: readonly Change[]): string[] {
  const byRecord = new Map<string, { first: string; last: string; fields: Set<string> }>();
  for (const change of changes) {
    const action = change.type.split('.')[1]!;
    const identity = identityOf(change);
    const held = byRecord.get(identity) ?? { first: action, last: action, fields: new Set<string>() };
    held.last = action;
    change.changed_fields?.forEach((field) => held.fields.add(field));
    byRecord.set(identity, held);
  }
  return [...byRecord.entries()]
    .flatMap(([identity, { first, last, fields }]) => {
      if (first === 'created') return last === 'deleted' ? [] : [`created ${identity}`];
      if (last === 'deleted') return [`deleted ${identity}`];
      if (first === 'deleted') return [`updated ${identity} (deleted, then created)`];
      return [`updated ${identity} ${[...fields].sort().join(',')}`];
    })
    .sort();
}
