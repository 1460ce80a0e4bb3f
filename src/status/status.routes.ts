import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import { readDataVersion } from '../data/import.ts';

const StatusBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  database: Type.Object({
    kind: Type.String(),
    ok: Type.Boolean(),
    latency_ms: Type.Optional(Type.Number()),
  }),
  data_version: Type.Optional(Type.Integer()),
  version: Type.String(),
  uptime_seconds: Type.Integer(),
});

import { VERSION } from '../version.ts';

export async function statusRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/status/',
    {
      schema: { hide: true, response: { 200: StatusBody, 503: StatusBody } },
      logLevel: 'warn',
    },
    async (_request, reply) => {
      const { db, kind } = app.database;
      const uptime_seconds = Math.floor(process.uptime());
      const started = performance.now();
      try {
        await sql`select 1`.execute(db);
        const latency_ms = Math.round((performance.now() - started) * 10) / 10;
        const data_version = await readDataVersion(db);
        return { status: 'ok' as const, database: { kind, ok: true, latency_ms }, data_version, version: VERSION, uptime_seconds };
      } catch {
        return reply
          .code(503)
          .header('retry-after', '5')
          .send({ status: 'unavailable' as const, database: { kind, ok: false }, version: VERSION, uptime_seconds });
      }
    },
  );
}
