// Webhook signing secrets (Standard Webhooks 1.0, https://www.standardwebhooks.com/): `whsec_` + base64 of 32 random
// bytes, shown to the owner once. The HMAC needs the secret itself, so the database keeps it sealed with AES-256-GCM
// under a key derived from WEBHOOK_SECRETS_KEY, which only the instances' configuration holds (docs/security.md).
import crypto from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const VERSION = 'v1';

export function generateSecret(): string {
  return `${SECRET_PREFIX}${crypto.randomBytes(32).toString('base64')}`;
}

/** The bytes a secret signs with: the base64 after `whsec_`. */
function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

/** Seals and opens secrets with one configured key. */
export class SecretBox {
  readonly #key: Buffer;

  constructor(configured: string) {
    // A fixed salt: the derivation only has to turn a long configured text into 32 bytes.
    this.#key = Buffer.from(crypto.hkdfSync('sha256', configured, 'cds-webhooks', 'webhook secrets v1', 32));
  }

  seal(secret: string): string {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.#key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${VERSION}.${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${sealed.toString('base64')}`;
  }

  /** The secret; throws (without its text) when the sealed value was made with another key or altered. */
  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || !data) throw new Error('a webhook secret is sealed in an unknown format');
    try {
      const decipher = crypto.createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('a webhook secret cannot be opened: WEBHOOK_SECRETS_KEY is not the key it was sealed with');
    }
  }
}

/** `webhook-signature`: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` for each secret, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map(
      (secret) =>
        `v1,${crypto.createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`,
    )
    .join(' ');
}
