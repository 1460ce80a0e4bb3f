// The webhooks' tables (migration 0015) as Kysely sees them.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Ref = ColumnType<string, string | number | bigint, string | number | bigint>;

export interface WebhookTable {
  id: Generated<string>;
  uuid: Generated<string>;
  user_id: Ref;
  url: string;
  resources: ColumnType<string[], string[] | undefined, string[]>;
  types: ColumnType<string[], string[] | undefined, string[]>;
  description: ColumnType<string, string | undefined, string>;
  /** The signing secret, encrypted (webhooks/webhook-secrets.ts); never the secret itself. */
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: Timestamp | null;
  created_at: DefaultTimestamp;
  /** The last change id delivered (or skipped as not subscribed). */
  delivered_through: Ref;
  replay_cursor: Ref | null;
  replay_until: Ref | null;
  next_attempt_at: Timestamp | null;
  failing_since: Timestamp | null;
  failed_attempts: ColumnType<number, number | undefined, number>;
  lease_owner: string | null;
  lease_until: Timestamp | null;
  disabled_at: Timestamp | null;
  disabled_reason: string | null;
}

export interface WebhookAttemptTable {
  id: Generated<string>;
  webhook_id: Ref;
  change_id: Ref;
  status: 'delivered' | 'failed' | 'refused';
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  attempted_at: Timestamp;
  next_attempt_at: Timestamp | null;
}

export interface WebhookTables {
  webhooks: WebhookTable;
  webhook_attempts: WebhookAttemptTable;
}
