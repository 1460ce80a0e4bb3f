// The key that seals webhook secrets in the database (webhook-secrets.ts), when WEBHOOK_SECRETS_KEY is not set. On the
// embedded database (one instance, its own data folder) the service makes one at the first start and keeps it in the
// data folder, readable by its owner only, so that `npm start` can take webhooks with no set-up; the database files
// alone (a copied folder without the key file, a dump) then hold no usable secret. On a PostgreSQL server the
// instances must share one key: WEBHOOK_SECRETS_KEY is required there (without it, creating a webhook says so).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type Config } from '../config.ts';

export const KEY_FILE = 'webhook-secrets.key';
const MIN_LENGTH = 32;

/** The configuration with its webhook secrets key: the configured one, else (embedded database) the data folder's. */
export async function withWebhookSecretsKey(config: Config): Promise<Config> {
  if (config.webhooks.secretsKey !== undefined || config.databaseUrl) return config;
  const file = path.join(config.dataDir, KEY_FILE);
  const key = (await readKey(file)) ?? (await createKey(config.dataDir, file));
  if (key.length < MIN_LENGTH)
    throw new ConfigError('WEBHOOK_SECRETS_KEY', `unset, and ${file} holds fewer than ${MIN_LENGTH} characters`);
  return { ...config, webhooks: { ...config.webhooks, secretsKey: key } };
}

async function readKey(file: string): Promise<string | undefined> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function createKey(dir: string, file: string): Promise<string> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const key = crypto.randomBytes(32).toString('base64');
  try {
    // `wx`: a second process starting at the same moment keeps the first one's key.
    await fs.writeFile(file, `${key}\n`, { flag: 'wx', mode: 0o600 });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return (await readKey(file)) ?? key;
  }
}
