// GET /metrics in the Prometheus text format: the process (CPU, memory, event loop, GC), every
// request by method, route template and status, and the state of what the service shares or
// caches. Each app has its own registry, so several apps in one process (tests) never mix counts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import client from 'prom-client';
import { sameSecret } from '../api-keys/api-keys.format.ts';
import type { Replicas } from '../db/server/replicas.ts';
import { memory } from '../memory-budget.ts';

/** Seconds; from a cache hit (well under a millisecond) to a slow uncached search. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

export interface Series {
  method: string;
  route: string;
  status: number;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  buckets: Float64Array;
}

/**
 * Requests by method, route template and status, with their durations. Kept in plain arrays and
 * written out at scrape time: prom-client validates and hashes the labels on every observation,
 * which cost several per cent of the throughput of a cached response.
 */
export class HttpMetrics {
  private readonly routes = new Map<string, Map<string, Series>>();
  /** Tool calls of /mcp answered early from a kept answer (mcp/mcp.early.ts). */
  mcpEarlyAnswers = 0;

  record(method: string, route: string, status: number, seconds: number): void {
    this.observe(this.series(method, route, status), seconds);
  }

  /** The series of a method, route and status, which a caller that records the same one again and again may keep. */
  series(method: string, route: string, status: number): Series {
    let byRoute = this.routes.get(route);
    if (!byRoute) {
      byRoute = new Map();
      this.routes.set(route, byRoute);
    }
    const key = method + status;
    let series = byRoute.get(key);
    if (!series) {
      series = { method, route, status, count: 0, sum: 0, buckets: new Float64Array(BUCKETS.length + 1) };
      byRoute.set(key, series);
    }
    return series;
  }

  observe(series: Series, seconds: number): void {
    series.count++;
    series.sum += seconds;
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
    series.buckets[i]!++;
  }

  /** The Prometheus text exposition of both metrics. */
  render(): string {
    const all = [...this.routes.values()].flatMap((byRoute) => [...byRoute.values()]);
    const labels = (s: Series) => `method="${escape(s.method)}",route="${escape(s.route)}",status_code="${s.status}"`;
    const lines = ['# HELP http_requests_total HTTP requests answered.', '# TYPE http_requests_total counter'];
    for (const s of all) lines.push(`http_requests_total{${labels(s)}} ${s.count}`);
    lines.push('# HELP http_request_duration_seconds Time from the request to the end of the response.');
    lines.push('# TYPE http_request_duration_seconds histogram');
    for (const s of all) {
      let cumulative = 0;
      BUCKETS.forEach((bound, i) => {
        cumulative += s.buckets[i]!;
        lines.push(`http_request_duration_seconds_bucket{le="${bound}",${labels(s)}} ${cumulative}`);
      });
      lines.push(`http_request_duration_seconds_bucket{le="+Inf",${labels(s)}} ${s.count}`);
      lines.push(`http_request_duration_seconds_sum{${labels(s)}} ${s.sum}`);
      lines.push(`http_request_duration_seconds_count{${labels(s)}} ${s.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** Registers GET /metrics and the request metrics; returns them, for the requests answered before the routes. */
export function registerMetrics(app: FastifyInstance): HttpMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  // Gauges that prom-client names like counters: `promtool check metrics` warns on them ("non-counter metrics should
  // not have _total suffix"). The same numbers stay, by type, in nodejs_active_handles, _requests and _resources.
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
    registry.removeSingleMetric(name);
  const http = new HttpMetrics();
  const { cache, watcher, counter, hub, purges } = app.shared;
  for (const metric of purges.all) registry.registerMetric(metric);
  // Values kept elsewhere, read when Prometheus scrapes.
  const counterOf = (name: string, help: string, read: () => number) =>
    new client.Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  const gaugeOf = (name: string, help: string, read: () => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  counterOf('cds_response_cache_hits_total', 'REST responses served from the response cache.', () => cache.hits);
  counterOf(
    'cds_response_cache_early_hits_total',
    'Of the response cache hits, those answered before routing (a remembered key, a plain GET).',
    () => cache.earlyHits,
  );
  counterOf(
    'cds_response_cache_misses_total',
    'Cacheable REST requests the response cache could not answer.',
    () => cache.misses,
  );
  counterOf(
    'cds_mcp_early_answers_total',
    'Tool calls of /mcp answered before routing from a kept answer (a remembered key, a plain POST).',
    () => http.mcpEarlyAnswers,
  );
  gaugeOf('cds_response_cache_entries', 'Responses held by the response cache.', () => cache.size);
  registerMemoryMetrics(registry);
  gaugeOf(
    'cds_data_version',
    'Data version this instance serves (bumped by every import or sync that changed something).',
    () => watcher.version,
  );
  gaugeOf(
    'cds_change_streams_open',
    'Streams of changes open on this instance (GET /api/v0/changes/stream).',
    () => hub.size,
  );
  counterOf(
    'cds_change_streams_cut_total',
    'Streams of changes cut off because their reader fell too far behind (changes/change-stream.ts MAX_QUEUED_BYTES).',
    () => hub.cut,
  );
  gaugeOf(
    'cds_rate_limit_shared',
    '1 while rate-limit counters are shared through Redis, 0 while this instance counts on its own.',
    () => (counter.shared ? 1 : 0),
  );

  const replicas = app.database.replicas;
  if (replicas) registerReplicaMetrics(registry, replicas);

  const embedded = app.database.embedded;
  if (embedded) {
    counterOf(
      'cds_embedded_database_restarts_total',
      'Worker threads of the embedded database started after a crash.',
      () => embedded.restarts,
    );
    gaugeOf(
      'cds_embedded_database_up',
      "1 while the embedded database's worker runs, 0 while it is down (restarting or failed).",
      () => (embedded.state === 'running' ? 1 : 0),
    );
  }

  app.addHook('onResponse', (request, reply, done) => {
    // The route template, never the raw path: unknown paths share one label, so a scan cannot
    // grow the series without bound.
    http.record(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  const token = app.config.metricsToken;
  // Prometheus' text format; a scraper's Accept names it or */*.
  app.get(
    '/metrics',
    { schema: { hide: true }, logLevel: 'warn', config: { offers: ['text/plain'] } },
    async (request, reply) => {
      if (token !== undefined && !authorized(request, token)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer realm="metrics"')
          .send({ detail: 'Missing or invalid metrics token.' });
      }
      reply.header('content-type', registry.contentType).header('cache-control', 'no-store');
      return (await registry.metrics()) + http.render();
    },
  );
  return http;
}

/** The memory budget of the caches (CACHE_MEMORY_MB, memory-budget.ts): each share's bytes in use and limit. */
function registerMemoryMetrics(registry: client.Registry): void {
  const shares = Object.values(memory.shares);
  new client.Gauge({
    name: 'cds_cache_memory_bytes',
    help: 'Estimated bytes held by each cache of the memory budget (responses, counts, boundaries, mcp, memos).',
    labelNames: ['cache'],
    registers: [registry],
    collect() {
      for (const share of shares) this.set({ cache: share.name }, share.used);
    },
  });
  new client.Gauge({
    name: 'cds_cache_memory_limit_bytes',
    help: "Each cache's share of the memory budget, in bytes.",
    labelNames: ['cache'],
    registers: [registry],
    collect() {
      for (const share of shares) this.set({ cache: share.name }, share.limit);
    },
  });
  new client.Gauge({
    name: 'cds_cache_memory_budget_bytes',
    help: 'What the caches may hold together (CACHE_MEMORY_MB).',
    registers: [registry],
    collect() {
      this.set(memory.total);
    },
  });
}

/** Per read replica (DATABASE_REPLICA_URLS, db/server/replicas.ts), labelled with its host:port: read at scrape time. */
function registerReplicaMetrics(registry: client.Registry, replicas: Replicas): void {
  const labelNames = ['replica'] as const;
  new client.Counter({
    name: 'cds_replica_reads_total',
    help: 'REST read queries run on this read replica.',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const replica of replicas.replicas) this.inc({ replica: replica.name }, replica.reads);
    },
  });
  new client.Counter({
    name: 'cds_replica_skipped_total',
    help: 'REST read queries that passed this replica by: behind (the newest data version not replayed), lagging, down.',
    labelNames: ['replica', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const replica of replicas.replicas)
        for (const [reason, count] of Object.entries(replica.skipped))
          this.inc({ replica: replica.name, reason }, count);
    },
  });
  new client.Counter({
    name: 'cds_replica_primary_reads_total',
    help: 'REST read queries run on the primary because no replica was current enough (or one failed).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(replicas.primaryReads);
    },
  });
  new client.Gauge({
    name: 'cds_replica_lag_seconds',
    help: 'How long this replica has not replayed a WAL position the primary had (0: it has replayed the last one seen).',
    labelNames,
    registers: [registry],
    collect() {
      for (const replica of replicas.replicas) this.set({ replica: replica.name }, replicas.lagMs(replica) / 1000);
    },
  });
  new client.Gauge({
    name: 'cds_replica_up',
    help: '1 while this replica answers as a standby (current, behind or lagging), 0 while it is down or not a standby.',
    labelNames,
    registers: [registry],
    collect() {
      const up = new Set(['current', 'behind', 'lagging']);
      for (const replica of replicas.replicas)
        this.set({ replica: replica.name }, up.has(replicas.state(replica)) ? 1 : 0);
    },
  });
}

function authorized(request: FastifyRequest, token: string): boolean {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
  return sameSecret(header.slice('Bearer '.length).trim(), token);
}
