// The keyless documents of the web side (/map/*.geojson, /calendar/events.ics): each built once per data version and
// UTC day (what "upcoming" means), kept in memory and served with an ETag, so that anyone may read them without a key
// and without any way to page through the API or to load the database (docs/api.md, "The map" and "CSV, `format=`
// and the events calendar").
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/index.ts';

interface Built {
  text: string;
  etag: string;
}

/** The document's current text: built again when the data version or the UTC day moved since the last build. */
export function dailyDocument(app: FastifyInstance, build: (db: Db) => Promise<string>): () => Promise<Built> {
  let entry: { stamp: string; body: Promise<Built> } | undefined;
  return () => {
    const stamp = `${app.shared.watcher.version}:${new Date().toISOString().slice(0, 10)}`;
    if (!entry || entry.stamp !== stamp) {
      const body = build(app.database.db).then((text) => ({
        text,
        etag: `"${crypto.createHash('sha1').update(text).digest('base64url')}"`,
      }));
      const current = { stamp, body };
      entry = current;
      // A failure (database down) is not kept: the next request builds it again.
      body.catch(() => {
        if (entry === current) entry = undefined;
      });
    }
    return entry.body;
  };
}

/** Sends a daily document with its type and ETag; 304 when `If-None-Match` names it. */
export async function sendDailyDocument(
  request: FastifyRequest,
  reply: FastifyReply,
  document: () => Promise<Built>,
  type: string,
  headers: Record<string, string> = {},
): Promise<FastifyReply> {
  const { text, etag } = await document();
  reply.headers({ 'content-type': type, 'cache-control': 'no-cache', etag, ...headers });
  const match = request.headers['if-none-match'];
  if (match && (match === '*' || match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)))
    return reply.code(304).send();
  return reply.send(text);
}
