// SYNC_INTERVAL, SYNC_GITHUB_ORGS, SYNC_OWASP_FROM and SYNC_GITHUB_REQUESTS_PER_MINUTE as config.ts reads them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, parseDuration } from './config.ts';
import { DEFAULT_REQUESTS_PER_MINUTE } from './data/sync/github/github.client.ts';

test('durations: seconds, minutes, hours, days; anything else is refused', () => {
  assert.equal(parseDuration('90'), 90_000);
  assert.equal(parseDuration('45s'), 45_000);
  assert.equal(parseDuration('30m'), 1_800_000);
  assert.equal(parseDuration(' 1H '), 3_600_000);
  assert.equal(parseDuration('1d'), 86_400_000);
  for (const bad of ['', '1.5h', '-1m', 'h', '1 hour', '1h30m']) assert.equal(parseDuration(bad), null, bad);
});

test('the sync is off by default and configured by four variables', () => {
  assert.deepEqual(
    { ...loadConfig({}).sync },
    {
      intervalMs: undefined,
      githubOrgs: [],
      owaspFrom: undefined,
      githubRequestsPerMinute: DEFAULT_REQUESTS_PER_MINUTE,
    },
  );
  assert.equal(DEFAULT_REQUESTS_PER_MINUTE, 600);
  const config = loadConfig({
    SYNC_INTERVAL: '1h',
    SYNC_GITHUB_ORGS: 'OWASP, owasp-community ,',
    SYNC_OWASP_FROM: './site/_data',
    SYNC_GITHUB_REQUESTS_PER_MINUTE: '0',
  });
  assert.deepEqual(
    { ...config.sync },
    {
      intervalMs: 3_600_000,
      githubOrgs: ['OWASP', 'owasp-community'],
      owaspFrom: './site/_data',
      githubRequestsPerMinute: 0,
    },
  );
  assert.ok(Object.isFrozen(config.sync.githubOrgs));
  assert.equal(loadConfig({ SYNC_INTERVAL: 'off' }).sync.intervalMs, undefined);
  assert.throws(
    () => loadConfig({ SYNC_INTERVAL: 'hourly' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'SYNC_INTERVAL',
  );
  assert.throws(() => loadConfig({ SYNC_INTERVAL: '10s' }), /SYNC_INTERVAL must be at least 60 seconds/);
  for (const bad of ['-1', 'fast', '1.5']) {
    assert.throws(
      () => loadConfig({ SYNC_GITHUB_REQUESTS_PER_MINUTE: bad }),
      (e: unknown) => e instanceof ConfigError && e.variable === 'SYNC_GITHUB_REQUESTS_PER_MINUTE',
      bad,
    );
  }
});
