// The tags of the edge (issue 44, docs/edge.md): what a public answer is labelled with (Surrogate-Key for Varnish and
// Fastly, Cache-Tag for Cloudflare) and what a change purges. One vocabulary for both sides, so that a purge always
// names the tags the answers carry:
//   `{resource}`        a list of the resource (every page, every format), the search, a list under another record
//   `{resource}:{key}`  the record's detail (found or 404), and each record named on a list page
//   `dv:{version}`      the data version the answer was built under (for an operator's own purge)
// A change of a record purges `{resource}` (any list may gain, lose or reorder it) and `{resource}:{key}`.
import crypto from 'node:crypto';
import type { Change } from '../changes/change-log.ts';

/** What the dumps' manifest and files carry; purged after each build of the dumps. */
export const DUMPS_TAG = 'dumps';
/** Not a tag: asks the purge for everything (the first start, a baseline written without changes). */
export const EVERYTHING = '*';

/** A character a tag does not keep as it is (most keys have none: they are used unchanged). */
const UNSAFE = /[^A-Za-z0-9._~:/@+-]/u;
const EVERY_UNSAFE = new RegExp(UNSAFE.source, 'gu');
// A key longer than this is named by its digest: Fastly takes keys of up to 1024 bytes, Cloudflare tags of 1024.
const LONGEST_KEY = 200;

/**
 * A record's key as a tag: characters outside a safe set are percent-encoded (a space would split a Surrogate-Key, a
 * comma a Cache-Tag), and a long key is replaced by its digest.
 */
function tagKey(key: string): string {
  if (key.length <= LONGEST_KEY && !UNSAFE.test(key)) return key;
  const safe = key.replace(EVERY_UNSAFE, (c) => encodeURIComponent(c));
  if (safe.length <= LONGEST_KEY) return safe;
  return `#${crypto.createHash('sha256').update(key).digest('base64url')}`;
}

export const resourceTag = (resource: string): string => resource;
export const recordTag = (resource: string, key: string): string => `${resource}:${tagKey(key)}`;
export const versionTag = (version: number): string => `dv:${version}`;

/**
 * What follows `/api/v0/{resource}/` in a change's detail path (its key where it has none: labels), as the detail
 * route's path parameters give it.
 */
function changeKey(change: Change): string {
  const prefix = `/api/v0/${change.resource}/`;
  return change.url?.startsWith(prefix) ? change.url.slice(prefix.length) : change.key;
}

/** The tags a change makes stale. */
export function changeTags(change: Change): string[] {
  return [resourceTag(change.resource), recordTag(change.resource, changeKey(change))];
}

/** Each tag once, in the order first seen. */
export function uniqueTags(tags: Iterable<string>): string[] {
  return [...new Set(tags)];
}
