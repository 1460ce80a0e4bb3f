// GET /badges/projects/{key}/health.json: a project's health as a Shields endpoint badge (issue 47,
// https://shields.io/badges/endpoint-badge), keyless like the map's data since a README's image cannot send a key.
// Every active project's badge is built at once per data version (a few hundred short documents), kept in memory and
// served with an ETag; a new data version drops them all, as it drops the API's cached answers.
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { stripPrefix } from '../api/v0/common/id-prefix.ts';
import { NotFoundError } from '../errors.ts';
import { listHealthBadges } from './badges.queries.ts';

/** How long Shields may keep a badge (its minimum is 300). */
export const BADGE_CACHE_SECONDS = 3600;

const COLORS: Record<string, string> = { healthy: 'brightgreen', needs_attention: 'yellow', unhealthy: 'red' };

interface Badge {
  text: string;
  etag: string;
}

export function healthBadge(score: number | null, bucket: string | null): Record<string, unknown> {
  const known = score !== null && bucket !== null;
  return {
    schemaVersion: 1,
    label: 'OWASP health',
    message: known ? `${Math.round(score)}/100 ${bucket.replace('_', ' ')}` : 'not computed',
    color: known ? (COLORS[bucket] ?? 'lightgrey') : 'lightgrey',
    cacheSeconds: BADGE_CACHE_SECONDS,
  };
}

export function badgeRoutes(app: FastifyInstance): void {
  let entry: { version: number; badges: Promise<Map<string, Badge>> } | undefined;
  const badges = () => {
    const version = app.shared.watcher.version;
    if (!entry || entry.version !== version) {
      const built = listHealthBadges(app.database.db).then(
        (rows) =>
          new Map(
            rows.map((row) => {
              const text = JSON.stringify(healthBadge(row.score, row.bucket));
              const etag = `"${crypto.createHash('sha1').update(text).digest('base64url')}"`;
              return [row.key.toLowerCase(), { text, etag }];
            }),
          ),
      );
      const current = { version, badges: built };
      entry = current;
      // A failure (database down) is not kept: the next request builds them again.
      built.catch(() => {
        if (entry === current) entry = undefined;
      });
    }
    return entry.badges;
  };

  app.get(
    '/badges/projects/:project_id/health.json',
    { schema: { hide: true, params: Type.Object({ project_id: Type.String({ maxLength: 200 }) }) } },
    async (request, reply) => {
      const { project_id } = request.params as { project_id: string };
      const badge = (await badges()).get(stripPrefix(project_id, 'www-project-'));
      if (!badge) throw new NotFoundError('Project');
      reply.headers({
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-cache',
        'access-control-allow-origin': '*',
        etag: badge.etag,
      });
      const match = request.headers['if-none-match'];
      if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === badge.etag))
        return reply.code(304).send();
      return reply.send(badge.text);
    },
  );
}
