// Webhooks in GraphQL (issue 43, docs/changes.md "Webhooks"): a signed-in user's endpoints, their secrets (shown once),
// replays and last attempts. The rules are webhooks/webhooks.service.ts's; a refusal is a GraphQL error with a code.
import mercurius from 'mercurius';
import {
  createWebhook,
  deleteWebhook,
  listWebhooks,
  replayWebhook,
  rotateWebhookSecret,
  WebhookError,
  webhookDeliveries,
  type WebhookRecord,
  type WebhookScope,
} from '../webhooks/webhooks.service.ts';
import { requireUser, type Context } from './resolvers.ts';

export const webhookTypeDefs = /* GraphQL */ `
  "An endpoint that receives the changes it subscribes to as signed Standard Webhooks messages."
  type WebhookNode {
    "Relay-style global id."
    id: ID!
    uuid: UUID!
    url: String!
    "Resources it receives the changes of (empty: all)."
    resources: [String!]!
    "Change types it receives (empty: all)."
    types: [String!]!
    description: String!
    createdAt: DateTime!
    "False once disabled (after WEBHOOK_RETRY_MAX_HOURS of failures, or a 410 answer); a replay enables it again."
    enabled: Boolean!
    disabledAt: DateTime
    disabledReason: String
    "The last change id delivered in order (a whole number)."
    lastDeliveredChangeId: Float!
    "While a replay is under way: the last change id it sends."
    replayingUntil: Float
    "While deliveries fail: since when, how many attempts, and the next one."
    failingSince: DateTime
    failedAttempts: Int!
    nextAttemptAt: DateTime
    "After a rotation: until when the previous secret signs too."
    previousSecretExpiresAt: DateTime
  }

  type WebhookWithSecret {
    webhook: WebhookNode!
    "The signing secret (whsec_…): returned only here, once."
    secret: String!
  }

  "One attempt to deliver one change."
  type WebhookDelivery {
    changeId: Float!
    "delivered, failed, or refused (the target's address is not allowed)."
    status: String!
    responseCode: Int
    "The first kilobyte of the answer at most."
    responseBody: String
    error: String
    attemptedAt: DateTime!
    nextAttemptAt: DateTime
  }

  extend type Query {
    "The signed-in user's webhooks, oldest first."
    webhooks: [WebhookNode!]!
    "The last attempts of one of the user's webhooks, newest first (at most 100)."
    webhookDeliveries(id: UUID!, limit: Int = 20): [WebhookDelivery!]!
  }

  extend type Mutation {
    """
    Registers an endpoint (https; public addresses only) for the changes of some resources and types (none: all),
    from now on. At most WEBHOOKS_PER_USER per user. The secret is returned once.
    """
    createWebhook(url: String!, resources: [String!], types: [String!], description: String): WebhookWithSecret!
    deleteWebhook(id: UUID!): Boolean!
    "A new secret (returned once); the previous one keeps signing for 24 hours (both signatures are sent)."
    rotateWebhookSecret(id: UUID!): WebhookWithSecret!
    "Sends again the changes after afterId up to untilId, or from since up to until, that the endpoint already had."
    replayWebhook(id: UUID!, afterId: Float, untilId: Float, since: DateTime, until: DateTime): WebhookNode!
  }
`;

export const webhookNode = (webhook: WebhookRecord) => ({
  id: Buffer.from(`WebhookNode:${webhook.uuid}`).toString('base64'),
  uuid: webhook.uuid,
  url: webhook.url,
  resources: webhook.resources,
  types: webhook.types,
  description: webhook.description,
  createdAt: webhook.created_at,
  enabled: webhook.disabled_at === null,
  disabledAt: webhook.disabled_at,
  disabledReason: webhook.disabled_reason,
  lastDeliveredChangeId: Number(webhook.delivered_through),
  replayingUntil: webhook.replay_until === null ? null : Number(webhook.replay_until),
  failingSince: webhook.failing_since,
  failedAttempts: webhook.failed_attempts,
  nextAttemptAt: webhook.next_attempt_at,
  previousSecretExpiresAt: webhook.previous_secret_until,
});

function scope(context: Context): WebhookScope {
  return {
    db: context.db,
    settings: context.config.webhooks,
    now: context.now(),
    lookup: context.request.server.shared.webhookLookup,
  };
}

/** Runs a service call as the signed-in user; its refusals become GraphQL errors with their code. */
async function asUser<T>(context: Context, run: (userId: string, scope: WebhookScope) => Promise<T>): Promise<T> {
  const user = await requireUser(context);
  try {
    return await run(user.id, scope(context));
  } catch (error) {
    if (error instanceof WebhookError) throw new mercurius.ErrorWithProps(error.message, { code: error.code });
    throw error;
  }
}

type Id = { id: string };

export const webhookResolvers = {
  Query: {
    webhooks: (_: unknown, __: unknown, context: Context) =>
      asUser(context, async (userId, s) => (await listWebhooks(s.db, userId)).map(webhookNode)),
    webhookDeliveries: (_: unknown, args: Id & { limit?: number }, context: Context) =>
      asUser(context, async (userId, s) =>
        (await webhookDeliveries(s, userId, args.id, args.limit)).map((attempt) => ({
          changeId: Number(attempt.change_id),
          status: attempt.status,
          responseCode: attempt.response_code,
          responseBody: attempt.response_body,
          error: attempt.error,
          attemptedAt: attempt.attempted_at,
          nextAttemptAt: attempt.next_attempt_at,
        })),
      ),
  },
  Mutation: {
    createWebhook: (
      _: unknown,
      args: { url: string; resources?: string[]; types?: string[]; description?: string },
      context: Context,
    ) =>
      asUser(context, async (userId, s) => {
        const { webhook, secret } = await createWebhook(s, userId, args);
        return { webhook: webhookNode(webhook), secret };
      }),
    deleteWebhook: (_: unknown, args: Id, context: Context) =>
      asUser(context, async (userId, s) => {
        await deleteWebhook(s, userId, args.id);
        return true;
      }),
    rotateWebhookSecret: (_: unknown, args: Id, context: Context) =>
      asUser(context, async (userId, s) => {
        const { webhook, secret } = await rotateWebhookSecret(s, userId, args.id);
        return { webhook: webhookNode(webhook), secret };
      }),
    replayWebhook: (
      _: unknown,
      args: Id & { afterId?: number; untilId?: number; since?: Date; until?: Date },
      context: Context,
    ) => asUser(context, async (userId, s) => webhookNode(await replayWebhook(s, userId, args.id, args))),
  },
};
