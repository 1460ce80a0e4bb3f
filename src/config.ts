// The only module that reads process.env. Everything else receives a frozen Config.
import { availableCores } from './cores.ts';
import { defaultCacheMemoryMb } from './memory-budget.ts';
import path from 'node:path';
import {
  bool,
  ConfigError,
  duration,
  integer,
  list,
  oneOf,
  origins,
  text,
  trustProxy,
  url,
  type Env,
} from './config.values.ts';

/** What the scheduled sync does (docs/sync.md): SYNC_INTERVAL, SYNC_GITHUB_ORGS, SYNC_OWASP_FROM and
 * SYNC_GITHUB_REQUESTS_PER_MINUTE. */
export interface SyncSettings {
  /** Time between scheduled runs; undefined: `serve` never syncs. */
  readonly intervalMs: number | undefined;
  /** Organizations the scheduled GitHub sync mirrors; empty: no GitHub sync. */
  readonly githubOrgs: readonly string[];
  /** Base URL or folder of the OWASP website's data files; undefined: no website sync. */
  readonly owaspFrom: string | undefined;
  /** GitHub requests started per minute at most by a sync (scheduled or `cds sync github`); 0: no pacing; unset: 600. */
  readonly githubRequestsPerMinute?: number;
}

/** How Redis is reached (REDIS_MODE, docs/redis.md). */
export type RedisMode = 'standalone' | 'cluster' | 'sentinel';

export type PoolMode = 'session' | 'transaction';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** The embedded database's shared_buffers in MB (PostgreSQL's default: 128). */
  readonly pgliteSharedBuffersMb: number;
  /** standalone: REDIS_URL; cluster: REDIS_URL names one node of the cluster; sentinel: the primary is asked of REDIS_SENTINELS. */
  readonly redisUrl: string | undefined;
  readonly redisMode: RedisMode;
  /** Sentinel mode: the sentinels' `host:port` (REDIS_SENTINELS) and the name of the primary they watch (REDIS_SENTINEL_NAME). */
  readonly redisSentinels: readonly string[];
  readonly redisSentinelName: string | undefined;
  /**
   * Sentinel mode: the sentinels' own credentials, when they ask for them (`requirepass`, or an ACL user):
   * REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_PASSWORD. The primary's are REDIS_URL's.
   */
  readonly redisSentinelUsername: string | undefined;
  readonly redisSentinelPassword: string | undefined;
  /** Prefix of every Redis key and channel, so several deployments can share one Redis. */
  readonly redisPrefix: string;
  /** /readyz answers 503 while the configured Redis does not answer (READY_REQUIRES_REDIS); off: only the database counts. */
  readonly readyRequiresRedis: boolean;
  readonly logLevel: LogLevel;
  readonly nodeEnv: string | undefined;
  readonly isProduction: boolean;
  readonly restAuth: 'required' | 'optional';
  readonly rateLimitPerSecond: number;
  /** The spellings of the rate limit in answers (RATE_LIMIT_HEADERS): both, draft or legacy. */
  readonly rateLimitHeaders: 'both' | 'draft' | 'legacy';
  /** Keep serialized REST responses in memory (on by default; off to measure uncached reads). */
  readonly responseCache: boolean;
  /** What the caches together may hold, in MB (memory-budget.ts); a quarter of the heap limit by default. */
  readonly cacheMemoryMb: number;
  /** Failed API key attempts per client address per minute before it gets 429. */
  readonly authFailuresPerMinute: number;
  /** Streams of changes (`GET /api/v0/changes/stream`) one API key may hold open on an instance at once. */
  readonly changesStreamsPerKey: number;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`; open otherwise. */
  readonly metricsToken: string | undefined;
  readonly authDevLogin: boolean;
  readonly github: {
    readonly clientId: string | undefined;
    readonly clientSecret: string | undefined;
    readonly webUrl: string;
    readonly apiUrl: string;
    readonly token: string | undefined;
  };
  /** The service's public address (for the OAuth callback); derived from each request when unset. */
  readonly publicUrl: string | undefined;
  readonly sessionTtlHours: number;
  /** GitHub logins (lower case) of OWASP staff: `isOwaspStaff` of the GraphQL user; nobody when unset. */
  readonly staffLogins: readonly string[];
  /** Load the bundled dataset into an empty database on start. */
  readonly autoImport: boolean;
  /** IMPORT_TRACE=1: a dataset import (`cds import`, the first start's) prints each phase's seconds and memory to stderr. */
  readonly importTrace: boolean;
  /** Scheduled GitHub and website syncs (docs/sync.md); off unless SYNC_INTERVAL is set. */
  readonly sync: SyncSettings;
  readonly shutdownTimeoutMs: number;
  /**
   * PostgreSQL server only: statements of the serving pool that run longer are cancelled (503), so none holds a
   * connection for long (DATABASE_STATEMENT_TIMEOUT_MS, 10 s). The client gives up 2 s later (db/index.ts).
   */
  readonly databaseStatementTimeoutMs: number;
  /**
   * PostgreSQL server only: how the server is reached (DATABASE_POOL_MODE). `session`: each connection is a session of
   * its own (directly, or a pooler in session mode). `transaction`: through a pooler in transaction mode (PgBouncer's
   * `pool_mode = transaction`), where consecutive transactions of one connection may run in different sessions: no
   * start-up parameters, settings made per transaction (db/server/pool-mode.ts).
   */
  readonly databasePoolMode: PoolMode;
  /**
   * PostgreSQL server only: the serving pools' reads as named prepared statements (DATABASE_PREPARED_STATEMENTS, on;
   * db/server/prepared.ts). Always off with DATABASE_POOL_MODE=transaction.
   */
  readonly databasePreparedStatements: boolean;
  /**
   * PostgreSQL server only: read replicas of DATABASE_URL (DATABASE_REPLICA_URLS, docs/replicas.md). REST reads and
   * dump builds run on one that has replayed the newest data version this instance knows, else on the primary
   * (db/server/replicas.ts).
   */
  readonly databaseReplicaUrls: readonly string[];
  /** A replica whose replay is behind the primary by more than this is skipped until it catches up (REPLICA_MAX_LAG_MS). */
  readonly replicaMaxLagMs: number;
  /** PostgreSQL server only: the pool, statement timeout and queue of list queries (db/index.ts ListBudget). */
  readonly lists: { readonly poolSize: number; readonly statementTimeoutMs: number; readonly queueLength: number };
  /** Fastify's trustProxy: which peers' X-Forwarded-For gives the client address (false: none). */
  readonly trustProxy: boolean | number | string[];
  /** Origins allowed to read the REST API from a browser (`*`: any). */
  readonly corsOrigins: string[];
  /**
   * Where the bulk dumps (`GET /api/v0/dumps/`) are written and served from: DUMPS_DIR, else `DATA_DIR/dumps` on the
   * embedded database; undefined (no dumps) on a PostgreSQL server without DUMPS_DIR.
   */
  readonly dumpsDir: string | undefined;
  /** How long the change log keeps a change (CHANGES_RETENTION_DAYS, 90): older ones are pruned every hour. */
  readonly changesRetentionDays: number;
  /** The source's API key of `cds import --from-dumps` (CDS_SOURCE_API_KEY); unset: no key is sent. */
  readonly sourceApiKey: string | undefined;
  /** How slow that source may be (CDS_SOURCE_TIMEOUT_MS, CDS_SOURCE_MIN_KBPS; data/import/dumps/source-pace.ts). */
  readonly sourcePace: { readonly timeoutMs: number; readonly minBytesPerSecond: number };
  /** Webhooks (docs/changes.md, "Webhooks"). */
  readonly webhooks: WebhookSettings;
  /**
   * EDGE_MAX_AGE_S (300): with REST_AUTH=optional, keyless reads are public for this long at a shared cache (its
   * `s-maxage`); 0 keeps every answer private (docs/edge.md).
   */
  readonly edgeMaxAgeS: number;
  /** EDGE_PURGE and its token: where purges go after each change; undefined: no purge. */
  readonly edgePurge: EdgePurgeSettings | undefined;
}

/** EDGE_PURGE (`varnish:URL`, `fastly:SERVICE_ID`, `cloudflare:ZONE_ID`), its token, EDGE_PURGE_URL_BASE. */
export type EdgePurgeSettings =
  | { readonly provider: 'varnish'; readonly target: string; readonly urlBase?: undefined }
  | {
      readonly provider: 'fastly' | 'cloudflare';
      /** The service (Fastly) or zone (Cloudflare) id. */
      readonly target: string;
      /** FASTLY_API_TOKEN or CLOUDFLARE_API_TOKEN: sent to that provider's API only. */
      readonly token: string;
      /** EDGE_PURGE_URL_BASE: the provider's API base instead of its own (tests' stand-ins). */
      readonly urlBase: string | undefined;
    };

/** WEBHOOKS_PER_USER, WEBHOOK_RETRY_MIN_MS, WEBHOOK_RETRY_MAX_HOURS, WEBHOOKS_ALLOW_PRIVATE, WEBHOOK_SECRETS_KEY. */
export interface WebhookSettings {
  readonly perUser: number;
  /** The first retry's delay; each next one doubles it (with jitter). */
  readonly retryMinMs: number;
  /** How long an endpoint may fail before it is disabled. */
  readonly retryMaxHours: number;
  /** `http` and private, loopback or link-local targets allowed (tests, private networks); a warning at start. */
  readonly allowPrivate: boolean;
  /** Encrypts the signing secrets in the database (webhooks/webhook-secrets.ts); unset: no webhook can be created. */
  readonly secretsKey: string | undefined;
}

export { ConfigError, parseDuration } from './config.values.ts';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads `.env` of the current directory into process.env with Node's own loader (`process.loadEnvFile`):
 * a variable already in the environment wins, even when it is set to the empty string. No file: nothing
 * happens. Returns whether a file was read. A malformed line is skipped by Node, as `--env-file` does.
 */
export function loadEnvFile(file = '.env'): boolean {
  try {
    process.loadEnvFile(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new ConfigError('.env', `cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = text(env, 'NODE_ENV');
  const isProduction = nodeEnv === 'production';
  const authDevLogin = bool(env, 'AUTH_DEV_LOGIN', false);
  if (authDevLogin && isProduction) {
    throw new ConfigError('AUTH_DEV_LOGIN', 'cannot be enabled when NODE_ENV=production');
  }
  const config: Config = {
    port: integer(env, 'PORT', 8000, 0, 65535),
    host: text(env, 'HOST') ?? '127.0.0.1',
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: path.resolve(text(env, 'DATA_DIR') ?? './.data'),
    pgliteSharedBuffersMb: integer(env, 'PGLITE_SHARED_BUFFERS_MB', 128, 1, 1024),
    ...redis(env),
    readyRequiresRedis: bool(env, 'READY_REQUIRES_REDIS', false),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    nodeEnv,
    isProduction,
    restAuth: oneOf(env, 'REST_AUTH', ['required', 'optional'] as const, 'required'),
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 10, 1, 1_000_000),
    rateLimitHeaders: oneOf(env, 'RATE_LIMIT_HEADERS', ['both', 'draft', 'legacy'] as const, 'both'),
    responseCache: bool(env, 'RESPONSE_CACHE', true),
    cacheMemoryMb: integer(env, 'CACHE_MEMORY_MB', defaultCacheMemoryMb(), 1, 1_048_576),
    authFailuresPerMinute: integer(env, 'AUTH_FAILURES_PER_MINUTE', 30, 1, 1_000_000),
    changesStreamsPerKey: integer(env, 'CHANGES_STREAMS_PER_KEY', 5, 1, 1_000),
    metricsToken: text(env, 'METRICS_TOKEN'),
    authDevLogin,
    github: {
      clientId: text(env, 'GITHUB_CLIENT_ID'),
      clientSecret: text(env, 'GITHUB_CLIENT_SECRET'),
      webUrl: url(env, 'GITHUB_WEB_URL', ['http:', 'https:'], 'https://github.com')!,
      apiUrl: url(env, 'GITHUB_API_URL', ['http:', 'https:'], 'https://api.github.com')!,
      token: text(env, 'GITHUB_TOKEN'),
    },
    publicUrl: url(env, 'PUBLIC_URL', ['http:', 'https:']),
    sessionTtlHours: integer(env, 'SESSION_TTL_HOURS', 336, 1, 24 * 365),
    staffLogins: list(env, 'OWASP_STAFF_LOGINS').map((login) => login.toLowerCase()),
    autoImport: bool(env, 'AUTO_IMPORT', true),
    importTrace: text(env, 'IMPORT_TRACE') === '1',
    sync: {
      intervalMs: duration(env, 'SYNC_INTERVAL', 60_000),
      githubOrgs: list(env, 'SYNC_GITHUB_ORGS'),
      owaspFrom: text(env, 'SYNC_OWASP_FROM'),
      githubRequestsPerMinute: integer(env, 'SYNC_GITHUB_REQUESTS_PER_MINUTE', 600, 0, 1_000_000), // github.client.ts's default,
    },
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
    databasePoolMode: oneOf(env, 'DATABASE_POOL_MODE', ['session', 'transaction'] as const, 'session'),
    databasePreparedStatements: bool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    databaseReplicaUrls: replicaUrls(env),
    replicaMaxLagMs: integer(env, 'REPLICA_MAX_LAG_MS', 30_000, 100, 86_400_000),
    lists: {
      poolSize: integer(env, 'LIST_POOL_SIZE', defaultListPoolSize(), 1, 100),
      statementTimeoutMs: integer(env, 'LIST_STATEMENT_TIMEOUT_MS', 3_000, 100, 600_000),
      queueLength: integer(env, 'LIST_QUEUE_LENGTH', 100, 0, 100_000),
    },
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    dumpsDir: dumpsDir(env),
    changesRetentionDays: integer(env, 'CHANGES_RETENTION_DAYS', 90, 1, 36_500),
    sourceApiKey: text(env, 'CDS_SOURCE_API_KEY'),
    sourcePace: {
      timeoutMs: integer(env, 'CDS_SOURCE_TIMEOUT_MS', 30_000, 100, 3_600_000),
      minBytesPerSecond: integer(env, 'CDS_SOURCE_MIN_KBPS', 10, 0, 1_000_000) * 1000,
    },
    webhooks: webhooks(env),
    edgeMaxAgeS: integer(env, 'EDGE_MAX_AGE_S', 300, 0, 31_536_000),
    edgePurge: edgePurge(env),
  };
  return deepFreeze(config);
}

/**
 * REDIS_URL, REDIS_MODE, REDIS_SENTINELS, REDIS_SENTINEL_NAME, the sentinels' credentials and REDIS_PREFIX, checked
 * together: a mode without what it needs, or sentinel settings without sentinel mode, is a mistake better reported at
 * start than found in a failover.
 */
function redis(
  env: Env,
): Pick<
  Config,
  | 'redisUrl'
  | 'redisMode'
  | 'redisSentinels'
  | 'redisSentinelName'
  | 'redisSentinelUsername'
  | 'redisSentinelPassword'
  | 'redisPrefix'
> {
  const redisMode = oneOf(env, 'REDIS_MODE', ['standalone', 'cluster', 'sentinel'] as const, 'standalone');
  const redisUrl = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const redisSentinels = list(env, 'REDIS_SENTINELS');
  const redisSentinelName = text(env, 'REDIS_SENTINEL_NAME');
  const redisSentinelUsername = text(env, 'REDIS_SENTINEL_USERNAME');
  // A password is taken as it is given: spaces at its ends may be part of it.
  const redisSentinelPassword = env.REDIS_SENTINEL_PASSWORD || undefined;
  const redisPrefix = text(env, 'REDIS_PREFIX') ?? 'cds:';
  if (redisMode === 'sentinel') {
    if (redisSentinels.length === 0) throw new ConfigError('REDIS_SENTINELS', 'is required with REDIS_MODE=sentinel');
    if (!redisSentinelName) throw new ConfigError('REDIS_SENTINEL_NAME', 'is required with REDIS_MODE=sentinel');
    if (redisSentinelUsername && !redisSentinelPassword)
      throw new ConfigError('REDIS_SENTINEL_USERNAME', 'needs REDIS_SENTINEL_PASSWORD');
    for (const sentinel of redisSentinels) {
      const port = /^(?:\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(sentinel)?.[1];
      if (!port || Number(port) > 65535) {
        throw new ConfigError('REDIS_SENTINELS', `must be a list of host:port, got "${sentinel}"`);
      }
    }
  } else {
    for (const name of [
      'REDIS_SENTINELS',
      'REDIS_SENTINEL_NAME',
      'REDIS_SENTINEL_USERNAME',
      'REDIS_SENTINEL_PASSWORD',
    ]) {
      if (text(env, name)) throw new ConfigError(name, `is set but REDIS_MODE is ${redisMode}, not sentinel`);
    }
  }
  if (redisMode === 'cluster') {
    if (!redisUrl) throw new ConfigError('REDIS_URL', 'is required with REDIS_MODE=cluster (the address of one node)');
    // The prefix becomes the keys' hash tag (redis.ts, redisKeyPrefix): a brace of its own would end the tag early.
    if (/[{}]/.test(redisPrefix))
      throw new ConfigError('REDIS_PREFIX', 'cannot contain { or } with REDIS_MODE=cluster');
  }
  return {
    redisUrl,
    redisMode,
    redisSentinels,
    redisSentinelName,
    redisSentinelUsername,
    redisSentinelPassword,
    redisPrefix,
  };
}

function webhooks(env: Env): WebhookSettings {
  // A password-like value is taken as given; short ones are refused (AES-256 keys are derived from it).
  const secretsKey = env.WEBHOOK_SECRETS_KEY || undefined;
  if (secretsKey !== undefined && secretsKey.length < 32)
    throw new ConfigError('WEBHOOK_SECRETS_KEY', 'must be at least 32 characters (e.g. `openssl rand -base64 32`)');
  return {
    perUser: integer(env, 'WEBHOOKS_PER_USER', 5, 0, 1000),
    retryMinMs: integer(env, 'WEBHOOK_RETRY_MIN_MS', 5_000, 1, 3_600_000),
    retryMaxHours: integer(env, 'WEBHOOK_RETRY_MAX_HOURS', 72, 1, 24 * 30),
    allowPrivate: bool(env, 'WEBHOOKS_ALLOW_PRIVATE', false),
    secretsKey,
  };
}

/** EDGE_PURGE, checked with the token its provider needs; a token or EDGE_PURGE_URL_BASE without it is a mistake. */
function edgePurge(env: Env): EdgePurgeSettings | undefined {
  const raw = text(env, 'EDGE_PURGE');
  const urlBase = url(env, 'EDGE_PURGE_URL_BASE', ['http:', 'https:']);
  if (raw === undefined) {
    for (const name of ['FASTLY_API_TOKEN', 'CLOUDFLARE_API_TOKEN', 'EDGE_PURGE_URL_BASE'])
      if (text(env, name)) throw new ConfigError(name, 'is set but EDGE_PURGE is not');
    return undefined;
  }
  const at = raw.indexOf(':');
  const provider = raw.slice(0, at);
  const target = raw.slice(at + 1).trim();
  const shape = 'must be varnish:URL, fastly:SERVICE_ID or cloudflare:ZONE_ID';
  if (at < 0 || !target) throw new ConfigError('EDGE_PURGE', shape);
  if (provider === 'varnish') {
    if (urlBase) throw new ConfigError('EDGE_PURGE_URL_BASE', 'applies to fastly and cloudflare only');
    return { provider, target: url({ EDGE_PURGE: target }, 'EDGE_PURGE', ['http:', 'https:'])! };
  }
  if (provider !== 'fastly' && provider !== 'cloudflare') throw new ConfigError('EDGE_PURGE', shape);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(target))
    throw new ConfigError(
      'EDGE_PURGE',
      `needs the ${provider === 'fastly' ? 'service' : 'zone'} id after ${provider}:`,
    );
  const tokenName = provider === 'fastly' ? 'FASTLY_API_TOKEN' : 'CLOUDFLARE_API_TOKEN';
  const other = provider === 'fastly' ? 'CLOUDFLARE_API_TOKEN' : 'FASTLY_API_TOKEN';
  // A token is taken as it is given; never echoed in a message.
  const tokens = { FASTLY_API_TOKEN: env['FASTLY_API_TOKEN'], CLOUDFLARE_API_TOKEN: env['CLOUDFLARE_API_TOKEN'] };
  const token = tokens[tokenName] || undefined;
  if (!token) throw new ConfigError(tokenName, `is required with EDGE_PURGE=${provider}:…`);
  if (text(env, other)) throw new ConfigError(other, `is set but EDGE_PURGE is ${provider}`);
  return { provider, target, token, urlBase };
}

/** DATABASE_REPLICA_URLS: PostgreSQL URLs, comma-separated; only beside a DATABASE_URL (the embedded database has none). */
function replicaUrls(env: Env): string[] {
  const urls = list(env, 'DATABASE_REPLICA_URLS').map((entry) =>
    url({ DATABASE_REPLICA_URLS: entry }, 'DATABASE_REPLICA_URLS', ['postgres:', 'postgresql:'])!,
  );
  if (urls.length > 0 && !text(env, 'DATABASE_URL'))
    throw new ConfigError('DATABASE_REPLICA_URLS', 'needs DATABASE_URL (replicas of a PostgreSQL server)');
  return urls;
}

/** DUMPS_DIR; on the embedded database its data folder's `dumps/` by default; on a server only when set. */
function dumpsDir(env: Env): string | undefined {
  const set = text(env, 'DUMPS_DIR');
  if (set !== undefined) return path.resolve(set);
  if (url(env, 'DATABASE_URL', ['postgres:', 'postgresql:'])) return undefined;
  return path.join(path.resolve(text(env, 'DATA_DIR') ?? './.data'), 'dumps');
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) {
    if (inner && typeof inner === 'object') deepFreeze(inner as object);
  }
  return Object.freeze(value);
}

/**
 * Lists get the cores but one (at least one): on this 2-core machine, 1 list connection kept a detail's p99 at 16.9 ms
 * while 20 clients walked deep pages, 3 let it reach 37.4 ms (bench/SCALE.md); more running list statements than
 * cores only make every other request wait for CPU. The cores are those this process may use: a container's CPU quota
 * counts (cores.ts). LIST_POOL_SIZE overrides it (e.g. a database on other machines).
 */
export function defaultListPoolSize(): number {
  return Math.max(1, availableCores().usable - 1);
}
