import os from 'node:os';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from './config.ts';

test('defaults when nothing is set', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8000);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.databaseUrl, undefined);
  assert.match(config.dataDir, /\.data$/);
  assert.equal(config.restAuth, 'required');
  assert.equal(config.rateLimitPerSecond, 10);
  assert.equal(config.authDevLogin, false);
  assert.equal(config.github.apiUrl, 'https://api.github.com');
  assert.equal(config.pgliteSharedBuffersMb, 128, "PostgreSQL's own default");
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.github));
});

for (const [name, value] of [
  ['PORT', 'eighty'],
  ['PORT', '70000'],
  ['PORT', '-1'],
  ['DATABASE_URL', 'mysql://localhost/x'],
  ['DATABASE_URL', 'not a url'],
  ['REDIS_URL', 'http://localhost'],
  ['LOG_LEVEL', 'loud'],
  ['REST_AUTH', 'sometimes'],
  ['RATE_LIMIT_PER_SECOND', '0'],
  ['AUTH_DEV_LOGIN', 'maybe'],
  ['LIST_POOL_SIZE', '0'],
  ['LIST_STATEMENT_TIMEOUT_MS', '3s'],
  ['LIST_QUEUE_LENGTH', '-1'],
  ['READY_REQUIRES_REDIS', 'sometimes'],
  ['DATABASE_STATEMENT_TIMEOUT_MS', '10s'],
  ['DATABASE_STATEMENT_TIMEOUT_MS', '50'],
  ['DATABASE_POOL_MODE', 'statement'],
  ['PGLITE_SHARED_BUFFERS_MB', '0'],
  ['PGLITE_SHARED_BUFFERS_MB', '16MB'],
  ['PGLITE_SHARED_BUFFERS_MB', '4096'],
  ['CACHE_MEMORY_MB', 'bad'],
  ['CACHE_MEMORY_MB', '0'],
  ['CACHE_MEMORY_MB', '64MB'],
  ['CHANGES_STREAMS_PER_KEY', '0'],
  ['CHANGES_STREAMS_PER_KEY', 'five'],
  ['WEBHOOKS_PER_USER', 'five'],
  ['WEBHOOKS_PER_USER', '-1'],
  ['WEBHOOK_RETRY_MIN_MS', '0'],
  ['WEBHOOK_RETRY_MIN_MS', '5s'],
  ['WEBHOOK_RETRY_MAX_HOURS', '0'],
  ['WEBHOOKS_ALLOW_PRIVATE', 'sometimes'],
  ['WEBHOOK_SECRETS_KEY', 'too-short'],
] as const) {
  test(`a bad ${name} (${value}) is refused with a message naming it`, () => {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (error: unknown) => error instanceof ConfigError && error.variable === name && error.message.includes(name),
    );
  });
}

test('CHANGES_STREAMS_PER_KEY: 5 open streams per key by default, or a number', () => {
  assert.equal(loadConfig({}).changesStreamsPerKey, 5);
  assert.equal(loadConfig({ CHANGES_STREAMS_PER_KEY: '2' }).changesStreamsPerKey, 2);
});

test('the list budget: 3 connections, 3 s, 100 waiting by default; each can be set', () => {
  assert.deepEqual(loadConfig({}).lists, {
    poolSize: Math.max(1, os.availableParallelism() - 1),
    statementTimeoutMs: 3_000,
    queueLength: 100,
  });
  const lists = loadConfig({ LIST_POOL_SIZE: '5', LIST_STATEMENT_TIMEOUT_MS: '2000', LIST_QUEUE_LENGTH: '0' }).lists;
  assert.deepEqual(lists, { poolSize: 5, statementTimeoutMs: 2_000, queueLength: 0 });
});

test('READY_REQUIRES_REDIS: off by default (Redis is reported by /readyz but does not make it 503)', () => {
  assert.equal(loadConfig({}).readyRequiresRedis, false);
  assert.equal(loadConfig({ READY_REQUIRES_REDIS: 'true' }).readyRequiresRedis, true);
  assert.equal(loadConfig({ READY_REQUIRES_REDIS: ' 0 ' }).readyRequiresRedis, false);
});

test('DATABASE_STATEMENT_TIMEOUT_MS: 10 s by default, or milliseconds', () => {
  assert.equal(loadConfig({}).databaseStatementTimeoutMs, 10_000);
  assert.equal(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '' }).databaseStatementTimeoutMs, 10_000);
  assert.equal(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '1500' }).databaseStatementTimeoutMs, 1_500);
});

test('DATABASE_POOL_MODE: session by default, or transaction (a pooler in transaction mode)', () => {
  assert.equal(loadConfig({}).databasePoolMode, 'session');
  assert.equal(loadConfig({ DATABASE_POOL_MODE: ' Transaction ' }).databasePoolMode, 'transaction');
  assert.equal(loadConfig({ DATABASE_POOL_MODE: 'session' }).databasePoolMode, 'session');
});

test('AUTH_DEV_LOGIN is refused in production', () => {
  assert.throws(() => loadConfig({ AUTH_DEV_LOGIN: 'true', NODE_ENV: 'production' }), /AUTH_DEV_LOGIN/);
  assert.equal(loadConfig({ AUTH_DEV_LOGIN: 'true' }).authDevLogin, true);
});

test('values are parsed and trimmed', () => {
  const config = loadConfig({
    PORT: ' 9001 ',
    DATABASE_URL: 'postgres://u@h:5432/db',
    REDIS_URL: 'redis://127.0.0.1:6379/',
    REST_AUTH: 'OPTIONAL',
    GITHUB_API_URL: 'http://127.0.0.1:9999/',
  });
  assert.equal(config.port, 9001);
  assert.equal(config.databaseUrl, 'postgres://u@h:5432/db');
  assert.equal(config.redisUrl, 'redis://127.0.0.1:6379');
  assert.equal(config.restAuth, 'optional');
  assert.equal(config.github.apiUrl, 'http://127.0.0.1:9999');
});

test('TRUST_PROXY: off by default, true, a hop count, or addresses and CIDR ranges', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
  assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' }).trustProxy, [
    '10.0.0.0/8',
    '127.0.0.1',
    '::1',
  ]);
  for (const bad of ['yes please', '10.0.0.0/33', '10.0.0.1/8/1', 'proxy.example.org']) {
    assert.throws(
      () => loadConfig({ TRUST_PROXY: bad }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'TRUST_PROXY',
      bad,
    );
  }
});

test('CORS_ORIGINS: * by default, or a list of origins', () => {
  assert.deepEqual(loadConfig({}).corsOrigins, ['*']);
  assert.deepEqual(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000/' }).corsOrigins, [
    'https://a.example',
    'http://localhost:3000',
  ]);
  for (const bad of ['a.example', 'https://a.example/path', 'ftp://a.example']) {
    assert.throws(
      () => loadConfig({ CORS_ORIGINS: bad }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'CORS_ORIGINS',
      bad,
    );
  }
});

test('DUMPS_DIR: the data folder’s dumps/ on the embedded database, none on a server unless set', () => {
  assert.equal(loadConfig({ DATA_DIR: '/srv/cds' }).dumpsDir, '/srv/cds/dumps');
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://localhost/cds' }).dumpsDir, undefined);
  assert.equal(
    loadConfig({ DATABASE_URL: 'postgres://localhost/cds', DUMPS_DIR: '/var/lib/cds/dumps' }).dumpsDir,
    '/var/lib/cds/dumps',
  );
  assert.equal(loadConfig({ CDS_SOURCE_API_KEY: ' cds_key ' }).sourceApiKey, 'cds_key');
  assert.equal(loadConfig({}).sourceApiKey, undefined);
});

test('CHANGES_RETENTION_DAYS: 90 days by default, or a number of days from 1', () => {
  assert.equal(loadConfig({}).changesRetentionDays, 90);
  assert.equal(loadConfig({ CHANGES_RETENTION_DAYS: ' 7 ' }).changesRetentionDays, 7);
  for (const bad of ['0', '-1', '90d', '1.5', '100000'])
    assert.throws(() => loadConfig({ CHANGES_RETENTION_DAYS: bad }), /CHANGES_RETENTION_DAYS/, bad);
});

test('CDS_SOURCE_TIMEOUT_MS and CDS_SOURCE_MIN_KBPS: the pace of a dumps source, 30 s and 10 kB/s by default', () => {
  assert.deepEqual(loadConfig({}).sourcePace, { timeoutMs: 30_000, minBytesPerSecond: 10_000 });
  assert.deepEqual(loadConfig({ CDS_SOURCE_TIMEOUT_MS: '300', CDS_SOURCE_MIN_KBPS: '0' }).sourcePace, {
    timeoutMs: 300,
    minBytesPerSecond: 0,
  });
  assert.throws(() => loadConfig({ CDS_SOURCE_TIMEOUT_MS: '10' }), /CDS_SOURCE_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ CDS_SOURCE_MIN_KBPS: 'fast' }), /CDS_SOURCE_MIN_KBPS/);
});

test('REDIS_MODE: standalone by default; cluster needs REDIS_URL, sentinel its sentinels and name (and their credentials, if any)', () => {
  const standalone = loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' });
  assert.equal(standalone.redisMode, 'standalone');
  assert.deepEqual(standalone.redisSentinels, []);
  const cluster = loadConfig({ REDIS_MODE: 'Cluster', REDIS_URL: 'redis://10.0.0.1:7000' });
  assert.equal(cluster.redisMode, 'cluster');
  const sentinel = loadConfig({
    REDIS_MODE: 'sentinel',
    REDIS_SENTINELS: '10.0.0.1:26379, sentinel-2:26379,[::1]:26380',
    REDIS_SENTINEL_NAME: 'cds',
  });
  assert.deepEqual(sentinel.redisSentinels, ['10.0.0.1:26379', 'sentinel-2:26379', '[::1]:26380']);
  assert.equal(sentinel.redisSentinelName, 'cds');
  assert.equal(sentinel.redisUrl, undefined);
  assert.equal(sentinel.redisSentinelPassword, undefined);
  const guarded = loadConfig({
    REDIS_MODE: 'sentinel',
    REDIS_SENTINELS: 'h:26379',
    REDIS_SENTINEL_NAME: 'cds',
    REDIS_SENTINEL_USERNAME: ' watcher ',
    REDIS_SENTINEL_PASSWORD: ' pass word ',
  });
  assert.equal(guarded.redisSentinelUsername, 'watcher');
  // A password is kept as given, spaces and all.
  assert.equal(guarded.redisSentinelPassword, ' pass word ');
  const refused: [Record<string, string>, string][] = [
    [{ REDIS_MODE: 'replicated' }, 'REDIS_MODE'],
    [{ REDIS_MODE: 'cluster' }, 'REDIS_URL'],
    [{ REDIS_MODE: 'cluster', REDIS_URL: 'redis://h:7000', REDIS_PREFIX: '{cds}:' }, 'REDIS_PREFIX'],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINEL_NAME: 'cds' }, 'REDIS_SENTINELS'],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 'h:26379' }, 'REDIS_SENTINEL_NAME'],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 'h', REDIS_SENTINEL_NAME: 'cds' }, 'REDIS_SENTINELS'],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 'h:99999', REDIS_SENTINEL_NAME: 'cds' }, 'REDIS_SENTINELS'],
    [{ REDIS_URL: 'redis://h:6379', REDIS_SENTINELS: 'h:26379' }, 'REDIS_SENTINELS'],
    [{ REDIS_MODE: 'cluster', REDIS_URL: 'redis://h:7000', REDIS_SENTINEL_NAME: 'cds' }, 'REDIS_SENTINEL_NAME'],
    [{ REDIS_URL: 'redis://h:6379', REDIS_SENTINEL_PASSWORD: 'secret' }, 'REDIS_SENTINEL_PASSWORD'],
    [
      { REDIS_MODE: 'sentinel', REDIS_SENTINELS: 'h:26379', REDIS_SENTINEL_NAME: 'cds', REDIS_SENTINEL_USERNAME: 'u' },
      'REDIS_SENTINEL_USERNAME',
    ],
  ];
  for (const [env, variable] of refused) {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && error.variable === variable,
      JSON.stringify(env),
    );
  }
});

test('DATABASE_REPLICA_URLS: none by default; postgres URLs beside DATABASE_URL; REPLICA_MAX_LAG_MS 30 s', () => {
  assert.deepEqual(loadConfig({}).databaseReplicaUrls, []);
  assert.equal(loadConfig({}).replicaMaxLagMs, 30_000);
  const config = loadConfig({
    DATABASE_URL: 'postgres://p@primary/cds',
    DATABASE_REPLICA_URLS: ' postgres://r@replica-1/cds, postgresql://r@replica-2:5433/cds ,',
    REPLICA_MAX_LAG_MS: '5000',
  });
  assert.deepEqual(config.databaseReplicaUrls, ['postgres://r@replica-1/cds', 'postgresql://r@replica-2:5433/cds']);
  assert.equal(config.replicaMaxLagMs, 5_000);
  for (const env of [
    { DATABASE_URL: 'postgres://p@primary/cds', DATABASE_REPLICA_URLS: 'mysql://replica/cds' },
    { DATABASE_REPLICA_URLS: 'postgres://r@replica-1/cds' },
  ]) {
    assert.throws(
      () => loadConfig(env),
      (e: unknown) => e instanceof ConfigError && e.variable === 'DATABASE_REPLICA_URLS',
    );
  }
  assert.throws(() => loadConfig({ REPLICA_MAX_LAG_MS: '1s' }), /REPLICA_MAX_LAG_MS/);
});

test('webhooks: 5 per user, retries from 5 s for 72 h, private targets refused, no secrets key; each can be set', () => {
  assert.deepEqual(loadConfig({}).webhooks, {
    perUser: 5,
    retryMinMs: 5_000,
    retryMaxHours: 72,
    allowPrivate: false,
    secretsKey: undefined,
  });
  const key = 'k'.repeat(32);
  assert.deepEqual(
    loadConfig({
      WEBHOOKS_PER_USER: '2',
      WEBHOOK_RETRY_MIN_MS: '100',
      WEBHOOK_RETRY_MAX_HOURS: '1',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_SECRETS_KEY: key,
    }).webhooks,
    { perUser: 2, retryMinMs: 100, retryMaxHours: 1, allowPrivate: true, secretsKey: key },
  );
});
