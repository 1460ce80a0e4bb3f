// cds webhooks …: webhook administration for operators (the rules of the GraphQL mutations, webhooks.service.ts).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { findUserByLogin } from '../auth/users.queries.ts';
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  replayWebhook,
  WebhookError,
  type WebhookRecord,
} from '../webhooks/webhooks.service.ts';
import { UsageError } from './usage.ts';
import { err, out, withDatabase } from './output.ts';
import { table } from './tables.ts';

class CommandFailed extends Error {}

function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, positionals: number) {
  try {
    const parsed = parseArgs({ args, options, allowPositionals: true, strict: true as const });
    if (parsed.positionals.length !== positionals) throw new Error(`expected ${positionals} argument(s)`);
    return parsed;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function changeId(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new UsageError(`--${name} must be a change id (a whole number)`);
  return Number(value);
}

const state = (webhook: WebhookRecord) =>
  webhook.disabled_at ? 'disabled' : webhook.failing_since ? `failing (${webhook.failed_attempts})` : 'active';

function describe(webhook: WebhookRecord) {
  return {
    id: webhook.uuid,
    owner: webhook.login,
    url: webhook.url,
    resources: webhook.resources,
    types: webhook.types,
    description: webhook.description,
    state: state(webhook),
    disabled_reason: webhook.disabled_reason,
    last_delivered_change_id: Number(webhook.delivered_through),
    next_attempt_at: webhook.next_attempt_at?.toISOString() ?? null,
  };
}

export async function runWebhooksCommand(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const scope = (db: Parameters<typeof listWebhooks>[0]) => ({ db, settings: config.webhooks, now: new Date() });
  try {
    switch (sub) {
      case 'create': {
        const { values, positionals } = parse(
          rest,
          {
            resource: { type: 'string', multiple: true },
            type: { type: 'string', multiple: true },
            description: { type: 'string' },
            json: { type: 'boolean' },
          },
          2,
        );
        const [login, url] = positionals as [string, string];
        return await withDatabase(config, async (db) => {
          await migrateToLatest(db);
          const user = await findUserByLogin(db, login);
          if (!user)
            throw new CommandFailed(`no user with login "${login}" (users are created when they first sign in)`);
          const { webhook, secret } = await createWebhook(scope(db), user.id, {
            url,
            resources: values.resource ?? [],
            types: values.type ?? [],
            description: values.description ?? '',
          });
          if (values.json) out(`${JSON.stringify({ ...describe(webhook), secret }, null, 2)}\n`);
          else out(`id      ${webhook.uuid}\nsecret  ${secret}\n`);
          err(
            `created webhook ${webhook.uuid} of ${webhook.login} to ${webhook.url}; the secret (printed on stdout) is shown only this once: keep it\n`,
          );
        });
      }
      case 'list': {
        const { values } = parse(rest, { json: { type: 'boolean' } }, 0);
        return await withDatabase(config, async (db) => {
          const webhooks = (await listWebhooks(db)).map(describe);
          if (values.json) return void out(`${JSON.stringify(webhooks, null, 2)}\n`);
          if (webhooks.length === 0) return void err('no webhooks\n');
          const rows = webhooks.map((w) => [w.id, w.owner, w.state, String(w.last_delivered_change_id), w.url]);
          out(table(['ID', 'OWNER', 'STATE', 'DELIVERED THROUGH', 'URL'], rows));
        });
      }
      case 'delete': {
        const { positionals } = parse(rest, {}, 1);
        return await withDatabase(config, async (db) => {
          await deleteWebhook(scope(db), undefined, positionals[0]!);
          err(`deleted webhook ${positionals[0]}\n`);
        });
      }
      case 'replay': {
        const { values, positionals } = parse(rest, { after: { type: 'string' }, until: { type: 'string' } }, 1);
        const range = { afterId: changeId(values.after, 'after'), untilId: changeId(values.until, 'until') };
        return await withDatabase(config, async (db) => {
          const webhook = await replayWebhook(scope(db), undefined, positionals[0]!, range);
          err(
            webhook.replay_until === null
              ? `webhook ${webhook.uuid} enabled; nothing to send again in that range (it goes on after change ${webhook.delivered_through})\n`
              : `webhook ${webhook.uuid} sends again the changes after ${webhook.replay_cursor} up to ${webhook.replay_until}, then goes on after change ${webhook.delivered_through}\n`,
          );
        });
      }
      default:
        throw new UsageError(
          sub === undefined
            ? 'webhooks needs an action: create, list, delete, replay'
            : `unknown webhooks command "${sub}"`,
        );
    }
  } catch (error) {
    if (error instanceof WebhookError) {
      err(`cds: ${error.code}: ${error.message}\n`);
      return 1;
    }
    if (!(error instanceof CommandFailed)) throw error;
    err(`cds: ${error.message}\n`);
    return 1;
  }
}
