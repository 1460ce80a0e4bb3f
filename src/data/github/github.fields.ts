// Validated reading of GitHub REST objects. Every refusal names the source (a file, or a request for
// the sync) and the record, so a bad response is reported where it is.
import { ImportError } from '../base/import-error.ts';

export type ApiObject = Record<string, unknown>;

export function isApiObject(value: unknown): value is ApiObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A readable name for a record, from the best identifier it has: `issue 42`, `member login="x"`. */
export function describe(kind: string, value: unknown): string {
  if (!isApiObject(value)) return kind;
  const key = ['id', 'login', 'tag_name', 'name', 'number'].find((k) => value[k] !== undefined && value[k] !== null);
  if (key === undefined) return `${kind} without id`;
  return key === 'id' ? `${kind} ${String(value.id)}` : `${kind} ${key}=${JSON.stringify(value[key])}`;
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;

export class Fields {
  readonly api: ApiObject;
  readonly source: string;
  readonly record: string;

  constructor(value: unknown, kind: string, source: string) {
    this.source = source;
    this.record = describe(kind, value);
    if (!isApiObject(value)) this.fail(`expected an object, found ${Array.isArray(value) ? 'an array' : typeof value}`);
    this.api = value;
  }

  fail(detail: string): never {
    throw new ImportError(this.source, this.record, detail);
  }

  has(key: string): boolean {
    return this.api[key] !== undefined && this.api[key] !== null;
  }

  /** A positive integer that must be there: `id`, `number`. */
  integer(key: string): number {
    const value = this.api[key];
    if (!this.has(key)) this.fail(`missing "${key}"`);
    if (!isPositiveInteger(value)) this.fail(`"${key}" is not a positive integer: ${JSON.stringify(value)}`);
    return value;
  }

  /** The GitHub id of an embedded object (user, milestone, label), or null when there is none. */
  ref(key: string, value: unknown = this.api[key]): number | null {
    if (value === undefined || value === null) return null;
    if (!isApiObject(value) || !isPositiveInteger(value.id)) this.fail(`"${key}" has no valid id`);
    return value.id;
  }

  requiredText(key: string): string {
    const value = this.text(key);
    return value === '' ? this.fail(`missing "${key}"`) : value;
  }

  /** Absent or null becomes '' (the text columns are NOT NULL DEFAULT ''). */
  text(key: string): string {
    const value = this.api[key];
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : this.fail(`"${key}" is not a string: ${JSON.stringify(value)}`);
  }

  count(key: string): number {
    const value = this.api[key];
    if (value === undefined || value === null) return 0;
    const valid = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
    return valid ? value : this.fail(`"${key}" is not a count: ${JSON.stringify(value)}`);
  }

  flag(key: string): boolean {
    const value = this.api[key];
    if (value === undefined || value === null) return false;
    return typeof value === 'boolean' ? value : this.fail(`"${key}" is not a boolean: ${JSON.stringify(value)}`);
  }

  /** An ISO 8601 timestamp as a normalized UTC string (so versions compare as text), or null. */
  timestamp(key: string): string | null {
    const value = this.api[key];
    if (value === undefined || value === null) return null;
    let time = Number.NaN;
    if (typeof value === 'string' && isCalendarTimestamp(value)) time = Date.parse(value);
    // Webhook payloads give some repository times as Unix seconds.
    else if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) time = value * 1000;
    if (Number.isNaN(time)) this.fail(`"${key}" is not a timestamp: ${JSON.stringify(value)}`);
    return new Date(time).toISOString();
  }

  requiredTimestamp(key: string): string {
    return this.timestamp(key) ?? this.fail(`missing "${key}"`);
  }

  state(key: string): 'open' | 'closed' {
    const value = this.api[key];
    if (value === 'open' || value === 'closed') return value;
    return this.fail(`"${key}" is not open or closed: ${JSON.stringify(value)}`);
  }

  /** A list; absent or null is an empty list. */
  list(key: string): unknown[] {
    const value = this.api[key] ?? [];
    return Array.isArray(value) ? value : this.fail(`"${key}" is not a list`);
  }
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

// Date.parse rolls 2022-02-30 over into March; PostgreSQL would refuse it in the middle of the write.
function isCalendarTimestamp(value: string): boolean {
  if (!ISO_TIMESTAMP.test(value)) return false;
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && new Date(Date.UTC(year, month, 0)).getUTCDate() >= day;
}

/** `owner/name` from an API address such as `https://api.github.com/repos/{owner}/{name}/labels/bug`. */
export function repositoryOfUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  const match = /^https?:\/\/[^/]+\/repos\/([^/]+)\/([^/?#]+)/.exec(url);
  return match ? `${match[1]}/${match[2]}` : undefined;
}
