// API key format: `cds_` + 32 random bytes in base64url (43 characters) + a 6-character checksum.
// The prefix lets secret scanners recognise a leaked key; the checksum lets the service refuse a
// mistyped or made-up key without a database lookup. Only the SHA-256 digest is ever stored.
import crypto from 'node:crypto';

export const KEY_PREFIX = 'cds_';
const RANDOM_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const SHAPE = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9_-]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function checksum(random: string): string {
  return crypto.createHash('sha256').update(`${KEY_PREFIX}${random}`).digest('base64url').slice(0, CHECKSUM_LENGTH);
}

export function sha256Hex(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

/** Compares two secrets in constant time (for equal lengths). */
export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

export function generateApiKey(): { raw: string; digest: string } {
  const random = crypto.randomBytes(32).toString('base64url');
  const raw = `${KEY_PREFIX}${random}${checksum(random)}`;
  return { raw, digest: sha256Hex(raw) };
}

/** True when the text has the shape and a valid checksum of a key this service issues. */
export function isWellFormedApiKey(raw: string): boolean {
  if (!SHAPE.test(raw)) return false;
  const random = raw.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LENGTH);
  return sameSecret(raw.slice(KEY_PREFIX.length + RANDOM_LENGTH), checksum(random));
}
