// One delivery as a Standard Webhooks 1.0 message (https://www.standardwebhooks.com/): the change in a JSON body
// `{type, timestamp, data}`, and the headers that let the receiver check it and drop repeats.
import type { Change } from '../changes/change-log.ts';
import { signatureHeader } from './webhook-secrets.ts';

export interface WebhookMessage {
  id: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * `webhook-id` is the same on every retry and replay of one change to one endpoint (the receiver's key to drop
 * repeats): the endpoint's id and the change's. `timestamp` in the body is when the change happened; the header's is
 * when this attempt was signed (seconds), which receivers hold against replay attacks.
 */
export function buildMessage(
  webhookUuid: string,
  change: Change,
  secrets: readonly string[],
  timestamp: number,
): WebhookMessage {
  const id = `msg_${webhookUuid.replaceAll('-', '')}_${change.id}`;
  const body = JSON.stringify({ type: change.type, timestamp: change.occurred_at, data: change });
  return {
    id,
    body,
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, id, timestamp, body),
      'user-agent': 'community-data-service-webhooks',
    },
  };
}
