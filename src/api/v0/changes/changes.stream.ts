// GET /api/v0/changes/stream: the change log as Server-Sent Events (docs/changes.md, "The stream"). The same filters
// as the pull feed (changes.filters.ts); it starts after `Last-Event-ID` (a reconnecting EventSource sends it), else
// after `after`, else from the start of `since`, else from now, and stays open for the changes to come. The gate of
// the REST scope has authenticated the key and counted the opening as one request; access/stream-keys.ts adds the
// stream's own rules (a key required, CHANGES_STREAMS_PER_KEY, the end of a revoked or expired key's streams); the
// instance's hub (changes/change-hub.ts) feeds it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequestError } from '../../../errors.ts';
import { ERROR_RESPONSES } from '../common/schemas.ts';
import { ChangeFilters, changeFilterOf } from './changes.filters.ts';
import { StreamKeys } from '../../../access/stream-keys.ts';
import { lastChangeId } from '../../../changes/change-log.queries.ts';
import { assertRetained } from './changes.queries.ts';
import type { SharedChanges } from '../../../announcements/heard.ts';

const LAST_EVENT_ID = /^\d{1,16}$/;

export function changesStreamRoute(app: FastifyInstance, { changes }: { changes: SharedChanges }): void {
  const { hub } = app.shared;
  const db = app.database.db;
  const keys = new StreamKeys({ db, hub, changes, perKey: app.config.changesStreamsPerKey, log: app.log });

  app.get(
    '/changes/stream',
    {
      // Server-Sent Events, which the OpenAPI document does not describe: docs/changes.md does.
      schema: { hide: true, querystring: ChangeFilters, response: ERROR_RESPONSES },
      exposeHeadRoute: false,
      config: { offers: ['text/event-stream'] },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      // Never a response to keep: it is a stream.
      request.cacheVersion = -1;
      const release = keys.admit(request.apiKey);
      try {
        const filter = changeFilterOf(request.query as Record<string, unknown>);
        const resumeAt = lastEventId(request);
        if (resumeAt !== undefined) filter.after = resumeAt;
        // 410 for a start older than what is kept, as the feed answers.
        await assertRetained(db, filter);
        const after = filter.after ?? (filter.since ? 0 : await lastChangeId(db));
        const stream = hub.open({
          filter: { ...filter, after },
          owner: request.apiKey!.keyId,
          until: request.apiKey!.expiresAt.getTime(),
        });
        reply.headers({
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          // Proxies that buffer answers (nginx) pass this one on as it comes.
          'x-accel-buffering': 'no',
          // A stream's connection is not reused: when it ends (a shutdown, a revocation) the socket goes too.
          connection: 'close',
        });
        return reply.send(stream.output);
      } finally {
        release();
      }
    },
  );
}

/** The Last-Event-ID header (an id this stream sent), if any; 400 when it is not one. */
function lastEventId(request: FastifyRequest): number | undefined {
  const raw = request.headers['last-event-id'];
  if (raw === undefined) return undefined;
  const value = (Array.isArray(raw) ? raw[0]! : raw).trim();
  if (value === '') return undefined;
  if (!LAST_EVENT_ID.test(value) || !Number.isSafeInteger(Number(value)))
    throw new InvalidRequestError([
      { loc: ['header', 'last-event-id'], msg: 'must be the id of a change (a non-negative integer)' },
    ]);
  return Number(value);
}
