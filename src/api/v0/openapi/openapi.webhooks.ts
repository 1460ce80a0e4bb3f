// The OpenAPI 3.1 `webhooks` section: the message a registered webhook receives for each change (issue 43,
// docs/changes.md "Webhooks"), so that a generated client has its type. Webhooks are managed in GraphQL and `cds`.
import { CHANGE_TYPES } from '../../../changes/change-log.ts';
import { ChangeItem } from '../changes/changes.schemas.ts';

const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

export const OPENAPI_WEBHOOKS = {
  change: {
    post: {
      operationId: 'receive_change',
      summary: 'A change, sent to a registered webhook',
      description:
        'A Standard Webhooks 1.0 message (https://www.standardwebhooks.com/): verify `webhook-signature` before ' +
        'trusting the body (docs/changes.md shows how in Node, Python and Go). Sent at least once, in change id order ' +
        'per webhook; drop repeats by `webhook-id`. Any 2xx is a delivery; a 410 disables the webhook at once; any ' +
        'other answer, or none within 10 seconds, is retried with backoff until the webhook has failed for ' +
        '`WEBHOOK_RETRY_MAX_HOURS` (72), and then disabled.',
      security: [],
      parameters: [
        header(
          'webhook-id',
          'The same on every retry and replay of one change to one webhook.',
          'msg_6f1c7a543d1e4a8e9c532d6f0b1e9a11_1042',
        ),
        header('webhook-timestamp', 'When this attempt was signed, in seconds since 1970 (UTC).', '1764403200'),
        header(
          'webhook-signature',
          '`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` with the secret after `whsec_` ' +
            '(base64-decoded); during the 24 hours after a rotation, two such signatures separated by a space.',
          'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        ),
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['type', 'timestamp', 'data'],
              properties: {
                type: { type: 'string', enum: CHANGE_TYPES, description: "The change's type." },
                timestamp: { type: 'string', format: 'date-time', description: 'When the change happened.' },
                data: { ...ChangeItem, description: 'The change, as the pull feed `GET /api/v0/changes/` shows it.' },
              },
            },
          },
        },
      },
      responses: {
        '200': { description: 'Received (any 2xx).' },
        '410': { description: 'Gone: the webhook is disabled at once.' },
      },
    },
  },
};
