// cds users create LOGIN [--key NAME] [--expires-in DAYS]: a local account for an operator or a
// developer without a GitHub app, and optionally its first API key (the quick start's one command).
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { createApiKey } from '../api-keys/api-keys.service.ts';
import { findUserByLogin, insertLocalUser } from '../auth/users.queries.ts';
import { UsageError } from './usage.ts';
import { DEFAULT_KEY_DAYS } from './keys.ts';
import { err, out, withDatabase } from './output.ts';

/** GitHub's rules for a login: what `POST /auth/dev/login` accepts too. */
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/;

export async function runUsersCommand(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'create')
    throw new UsageError(sub === undefined ? 'users needs an action: create' : `unknown users command "${sub}"`);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { key: { type: 'string' }, 'expires-in': { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError('users create takes one LOGIN');
  const login = positionals[0]!;
  if (!LOGIN.test(login))
    throw new UsageError('LOGIN must be 1 to 39 letters, digits or inner hyphens (a GitHub login)');
  const keyName = values.key;
  if (keyName !== undefined && keyName.trim() === '') throw new UsageError('--key needs a name');
  const daysText = values['expires-in'] ?? String(DEFAULT_KEY_DAYS);
  if (values['expires-in'] !== undefined && keyName === undefined) throw new UsageError('--expires-in goes with --key');
  if (!/^\d+$/.test(daysText) || Number(daysText) < 1 || Number(daysText) > 3650)
    throw new UsageError('--expires-in must be a number of days, 1 to 3650');
  let failed = false;
  const code = await withDatabase(config, async (db) => {
    await migrateToLatest(db);
    const created = await insertLocalUser(db, login);
    const user = created ?? (await findUserByLogin(db, login));
    if (!user) throw new Error(`could not create the user "${login}"`);
    err(created ? `created user ${user.login}\n` : `user ${user.login} already exists\n`);
    if (keyName === undefined) return;
    const result = await createApiKey(db, user.id, keyName, new Date(Date.now() + Number(daysText) * 86_400_000));
    if (!result.ok) {
      err(`cds: ${result.code}: ${result.message}\n`);
      failed = true;
      return;
    }
    out(`${result.rawKey}\n`);
    err(
      `created key ${result.apiKey.uuid} "${result.apiKey.name}", expires ${result.apiKey.expires_at.toISOString()}; the key (printed on stdout) is shown only this once: keep it\n`,
    );
  });
  return failed ? 1 : code;
}
