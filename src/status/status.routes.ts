import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { readDataVersion } from '../announcements/counters.queries.ts';
import { probeDatabase } from './status.queries.ts';
import { JSON_TYPE } from '../http/negotiate.ts';
import { memory } from '../memory-budget.ts';

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
  /** What the caches hold (an estimate) and may hold (CACHE_MEMORY_MB), memory-budget.ts. */
  cache_memory: Type.Object({ used_bytes: Type.Integer(), budget_bytes: Type.Integer() }),
});

import { VERSION } from '../version.ts';

const Check = Type.Object({ ok: Type.Boolean(), latency_ms: Type.Optional(Type.Number()) });
const LiveBody = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]),
  /** Only when the embedded database's worker is dead and will not come back by itself. */
  embedded_database: Type.Optional(Type.Literal('failed')),
});
const ReplicaCheck = Type.Object({
  name: Type.String(),
  state: Type.Union(
    ['starting', 'current', 'behind', 'lagging', 'down', 'not-standby'].map((state) => Type.Literal(state)),
  ),
  lag_ms: Type.Integer(),
});
const ReadyBody = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  database: Check,
  /** Only when Redis is configured (REDIS_URL, or REDIS_SENTINELS). */
  redis: Type.Optional(Check),
  /** Only with DATABASE_REPLICA_URLS: each read replica's state (db/server/replicas.ts); never makes the instance unready. */
  replicas: Type.Optional(Type.Array(ReplicaCheck)),
});

const elapsed = (started: number) => Math.round((performance.now() - started) * 10) / 10;

/** How long /readyz waits for each dependency. */
const PROBE_TIMEOUT_MS = 2_000;

/** Runs one dependency's check; a failure (or a check slower than 2 s) is `ok: false`, never an exception. */
async function check(probe: () => Promise<unknown>): Promise<{ ok: boolean; latency_ms?: number }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS))),
    ]);
    return { ok: true, latency_ms: elapsed(started) };
  } catch {
    return { ok: false };
  } finally {
    clearTimeout(timer);
  }
}

export function statusRoutes(app: FastifyInstance): void {
  // Liveness: the process answers (a process manager restarts it when this stops). Touches no database, so a
  // database outage never gets healthy instances restarted. One exception: an embedded database whose worker
  // cannot come back by itself (in memory, or 5 failed restarts in a row) makes it 503, since only restarting
  // the process can help then; a worker being restarted is still `ok` (/readyz says 503 meanwhile).
  app.get(
    '/livez',
    {
      schema: { hide: true, response: { 200: LiveBody, 503: LiveBody } },
      logLevel: 'warn',
      config: { offers: [JSON_TYPE] },
    },
    async (_request, reply) => {
      if (app.database.embedded?.state !== 'failed') return { status: 'ok' as const };
      return reply.code(503).send({ status: 'failed' as const, embedded_database: 'failed' as const });
    },
  );

  // Readiness: whether this instance can serve now (a load balancer stops sending traffic while it is 503): the
  // database. Redis, when configured, is reported but counts only with READY_REQUIRES_REDIS: without it the instance
  // still serves (rate limits per instance, see README), and every instance shares the one Redis, so an outage of it
  // would take them all out of rotation at once. Read replicas likewise are reported, never required.
  app.get(
    '/readyz',
    {
      schema: { hide: true, response: { 200: ReadyBody, 503: ReadyBody } },
      logLevel: 'warn',
      config: { offers: [JSON_TYPE] },
    },
    async (_request, reply) => {
      const { redis } = app.shared;
      const [database, redisCheck] = await Promise.all([
        check(() => probeDatabase(app.database, PROBE_TIMEOUT_MS)),
        redis ? check(() => redis.ping()) : Promise.resolve(undefined),
      ]);
      const redisOk = !app.config.readyRequiresRedis || (redisCheck?.ok ?? true);
      const ready = database.ok && redisOk;
      const replicas = app.database.replicas;
      const body = {
        status: ready ? ('ready' as const) : ('unavailable' as const),
        database,
        ...(redisCheck ? { redis: redisCheck } : {}),
        // Reported only: the primary serves every read a replica cannot.
        ...(replicas
          ? {
              replicas: replicas.replicas.map((replica) => ({
                name: replica.name,
                state: replicas.state(replica),
                lag_ms: Math.round(replicas.lagMs(replica)),
              })),
            }
          : {}),
      };
      if (ready) return body;
      return reply.code(503).header('retry-after', '5').send(body);
    },
  );

  app.get(
    '/status/',
    {
      schema: { hide: true, response: { 200: StatusBody, 503: StatusBody } },
      logLevel: 'warn',
      config: { offers: [JSON_TYPE] },
    },
    async (_request, reply) => {
      const { db, kind } = app.database;
      const uptime_seconds = Math.floor(process.uptime());
      const cache_memory = { used_bytes: Math.round(memory.used), budget_bytes: memory.total };
      const started = performance.now();
      try {
        await probeDatabase(app.database, PROBE_TIMEOUT_MS);
        const latency_ms = Math.round((performance.now() - started) * 10) / 10;
        const data_version = await readDataVersion(db);
        return {
          status: 'ok' as const,
          database: { kind, ok: true, latency_ms },
          data_version,
          version: VERSION,
          uptime_seconds,
          cache_memory,
        };
      } catch {
        return reply
          .code(503)
          .header('retry-after', '5')
          .send({
            status: 'unavailable' as const,
            database: { kind, ok: false },
            version: VERSION,
            uptime_seconds,
            cache_memory,
          });
      }
    },
  );
}
