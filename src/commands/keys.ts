// cds keys …: API key administration for operators (the same rules as the GraphQL mutations).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { createApiKey, MAX_GRACE_HOURS, revokeApiKey, rotateApiKey } from '../api-keys/api-keys.service.ts';
import { findKeyByUuid, findKeysOfUser } from '../api-keys/api-keys.queries.ts';
import { findUserByLogin } from '../auth/users.queries.ts';
import { UsageError } from './usage.ts';
import { err, keyRevoked, out, withDatabase } from './output.ts';
import { table } from './tables.ts';
import { commandAnnouncer } from '../announcements/announce.ts';

class CommandFailed extends Error {}

/** How long a key lives when `--expires-in` is not given (as `users create --key`'s). */
export const DEFAULT_KEY_DAYS = 30;

function parse(args: string[], options: ParseArgsConfig['options'], positionals = 0) {
  try {
    const parsed = parseArgs({ args, options, allowPositionals: positionals > 0, strict: true });
    if (parsed.positionals.length !== positionals) throw new Error(`expected ${positionals} argument(s)`);
    return parsed;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

export async function runKeysCommand(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    switch (sub) {
      case 'create': {
        const { values } = parse(rest, {
          user: { type: 'string' },
          name: { type: 'string' },
          'expires-in': { type: 'string' },
        });
        const login = required(values, 'user');
        const name = required(values, 'name');
        // As `users create --key`: 30 days unless told.
        const days = (values as Record<string, unknown>)['expires-in'] ?? String(DEFAULT_KEY_DAYS);
        if (typeof days !== 'string' || !/^\d+$/.test(days) || Number(days) < 1 || Number(days) > 3650)
          throw new UsageError('--expires-in must be a number of days, 1 to 3650');
        return await withDatabase(config, async (db) => {
          await migrateToLatest(db);
          const user = await findUserByLogin(db, login);
          if (!user)
            throw new CommandFailed(`no user with login "${login}" (users are created when they first sign in)`);
          const result = await createApiKey(db, user.id, name, new Date(Date.now() + Number(days) * 86_400_000));
          if (!result.ok) throw new CommandFailed(`${result.code}: ${result.message}`);
          out(`${result.rawKey}\n`);
          err(
            `created key ${result.apiKey.uuid} "${result.apiKey.name}", expires ${result.apiKey.expires_at.toISOString()}; the key (printed on stdout) is shown only this once: keep it\n`,
          );
        });
      }
      case 'list': {
        const { values } = parse(rest, { user: { type: 'string' } });
        const login = required(values, 'user');
        return await withDatabase(config, async (db) => {
          const user = await findUserByLogin(db, login);
          if (!user) throw new CommandFailed(`no user with login "${login}"`);
          const now = Date.now();
          const keys = await findKeysOfUser(db, user.id);
          if (keys.length === 0) {
            err(`${user.login} has no API keys\n`);
            return;
          }
          const rows = keys.map((key) => [
            key.uuid,
            keyState(key, now),
            key.expires_at.toISOString(),
            key.last_used_at ? key.last_used_at.toISOString() : 'never',
            key.name,
          ]);
          out(table(['UUID', 'STATE', 'EXPIRES', 'LAST USED', 'NAME'], rows));
        });
      }
      case 'revoke': {
        const { positionals } = parse(rest, {}, 1);
        const uuid = positionals[0]!.toLowerCase();
        if (!/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/.test(uuid)) throw new UsageError('UUID must be a key uuid');
        return await withDatabase(config, async (db) => {
          const key = await findKeyByUuid(db, uuid);
          if (!key) throw new CommandFailed('API key not found.');
          if (key.is_revoked) {
            err(`${uuid} was already revoked; nothing changed\n`);
            return;
          }
          await revokeApiKey(db, key.user_id, uuid, commandAnnouncer(config, { revocation: keyRevoked }));
          err(`revoked ${uuid}\n`);
        });
      }
      case 'rotate': {
        const { values, positionals } = parse(rest, { 'grace-hours': { type: 'string' } }, 1);
        const uuid = positionals[0]!.toLowerCase();
        if (!/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/.test(uuid)) throw new UsageError('UUID must be a key uuid');
        const hours = required(values, 'grace-hours');
        if (!/^\d+$/.test(hours) || Number(hours) > MAX_GRACE_HOURS)
          throw new UsageError(`--grace-hours must be a number of hours, 0 to ${MAX_GRACE_HOURS}`);
        return await withDatabase(config, async (db) => {
          const key = await findKeyByUuid(db, uuid);
          if (!key) throw new CommandFailed('API key not found.');
          const announcer = commandAnnouncer(config, { revocation: keyRevoked });
          const result = await rotateApiKey(db, key.user_id, uuid, Number(hours), announcer);
          if (!result.ok) throw new CommandFailed(`${result.code}: ${result.message}`);
          out(`${result.rawKey}\n`);
          let old = Number(hours) === 0 ? 'the old key is revoked' : `the old key works for ${hours} more hour(s)`;
          if (result.endedGraceOf)
            old += `; the key it had replaced, ${result.endedGraceOf}, is revoked (it was in grace)`;
          err(
            `rotated ${uuid} to ${result.apiKey.uuid} "${result.apiKey.name}", expires ${result.apiKey.expires_at.toISOString()}; ${old}; the new key (printed on stdout) is shown only this once: keep it\n`,
          );
        });
      }
      default:
        throw new UsageError(`unknown keys command "${sub ?? ''}"`);
    }
  } catch (error) {
    if (!(error instanceof CommandFailed)) throw error;
    err(`cds: ${error.message}\n`);
    return 1;
  }
}

/**
 * A key's state in `cds keys list`: a leaked key says so (it was revoked for it), a rotated key revoked by hand during
 * its grace period is revoked, another rotated one says it was replaced (during its grace period it still works:
 * "rotated, in grace"), before the plain revoked, expired and active.
 */
function keyState(
  key: {
    is_revoked: boolean;
    is_rotated: boolean;
    is_revoked_in_grace: boolean;
    expires_at: Date;
    leak_reported_at: Date | null;
  },
  now: number,
): string {
  const expired = key.expires_at.getTime() <= now;
  if (key.leak_reported_at) return 'revoked (leaked)';
  if (key.is_revoked_in_grace) return 'revoked';
  if (key.is_rotated) return key.is_revoked || expired ? 'rotated' : 'rotated, in grace';
  return key.is_revoked ? 'revoked' : expired ? 'expired' : 'active';
}
