// Typed access to the fields of one raw record; every problem becomes an ImportError that names
// the file and the record.
import { ImportError } from '../base/import-error.ts';
import { cleanText } from './owasp.placeholders.ts';

export class RecordFields {
  readonly raw: Record<string, unknown>;

  constructor(
    readonly file: string,
    readonly record: string,
    value: unknown,
  ) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail('is not an object');
    this.raw = value as Record<string, unknown>;
  }

  fail(detail: string): never {
    throw new ImportError(this.file, this.record, detail);
  }

  /** A trimmed string ('' when absent); numbers are accepted as text, anything else is an error. */
  string(field: string): string {
    const value = this.raw[field];
    if (value === undefined || value === null) return '';
    if (typeof value === 'string') return value.trim();
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    return this.fail(`field "${field}" must be text, not ${Array.isArray(value) ? 'a list' : typeof value}`);
  }

  required(field: string): string {
    const value = this.string(field);
    if (!value) this.fail(`field "${field}" is missing or empty`);
    return value;
  }

  /** Free text with the website's template placeholders removed. */
  text(field: string): string {
    return cleanText(this.string(field));
  }

  boolean(field: string): boolean {
    const value = this.raw[field];
    if (value === undefined || value === null) return false;
    if (typeof value === 'boolean') return value;
    return this.fail(`field "${field}" must be true or false`);
  }

  /** A number given as a number or as numeric text; undefined when absent or blank. */
  number(field: string): number | undefined {
    const text = this.string(field);
    if (!text) return undefined;
    const value = Number(text);
    if (!Number.isFinite(value)) this.fail(`field "${field}" is not a number: "${text}"`);
    return value;
  }

  /** A required calendar date, as YYYY-MM-DD. */
  day(field: string): string {
    const value = this.raw[field];
    const text = value instanceof Date ? value.toISOString().slice(0, 10) : this.required(field);
    const day = parseDay(text);
    if (!day) this.fail(`field "${field}" is not a valid date: "${text}"`);
    return day;
  }

  /** A required date as a timestamp at midnight UTC (the files give no time zone). */
  timestamp(field: string): string {
    return `${this.day(field)}T00:00:00.000Z`;
  }
}

/** `YYYY-MM-DD`, or the `Tue Nov 23 12:28:01 2021` form of older records, checked against the calendar. */
export function parseDay(text: string): string | undefined {
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (iso) return calendarDay(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const ctime = /^[A-Za-z]{3} ([A-Za-z]{3}) +(\d{1,2}) \d{2}:\d{2}:\d{2} (\d{4})$/.exec(text);
  if (ctime) return calendarDay(Number(ctime[3]), monthNumber(ctime[1]!), Number(ctime[2]));
  return undefined;
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** 1–12 from an English month name or an abbreviation of it ("Sep", "Sept"); 0 when unknown. */
export function monthNumber(name: string): number {
  const lower = name.toLowerCase().replace(/\.$/, '');
  return lower.length < 3 ? 0 : MONTHS.findIndex((month) => month.startsWith(lower)) + 1;
}

export function calendarDay(year: number, month: number, day: number): string | undefined {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date.toISOString().slice(0, 10);
}

/** Lower-case letters and digits joined by '-': "OWASP Global AppSec EU 2026" → "owasp-global-appsec-eu-2026". */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
}

/** The key in a website URL: `https://owasp.org/www-chapter-london/` → `london` for prefix `www-chapter-`. */
export function keyFromUrl(url: string, prefix: string): string | undefined {
  const match = /^https?:\/\/(?:www\.)?owasp\.org\/([^/?#]+)\/?$/i.exec(url.trim());
  const repo = match?.[1]?.toLowerCase();
  return repo?.startsWith(prefix) && repo.length > prefix.length ? repo.slice(prefix.length) : undefined;
}
