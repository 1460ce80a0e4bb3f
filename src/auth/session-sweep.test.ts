// The sweep of expired sessions, run by hand through the app's injected timer (no waiting).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildTestApp } from '../../test/app.ts';
import { devSignIn, graphql } from '../../test/auth.ts';
import { SWEEP_INTERVAL_MS } from './session-sweep.ts';
import { PRUNE_INTERVAL_MS } from '../changes/change-retention.ts';

test('the periodic sweep deletes expired sessions, keeps live ones, and stops when the app closes', async () => {
  const scheduled: { intervalMs: number; task: () => Promise<void>; stopped: boolean }[] = [];
  const t = await buildTestApp({
    env: { AUTH_DEV_LOGIN: 'true' },
    every: (intervalMs, task) => {
      const entry = { intervalMs, task, stopped: false };
      scheduled.push(entry);
      return () => (entry.stopped = true);
    },
  });
  try {
    // The app's timer also runs the change log's retention (changes/change-retention.ts), hourly too: both run here.
    assert.deepEqual(
      scheduled.map((entry) => entry.intervalMs),
      [SWEEP_INTERVAL_MS, PRUNE_INTERVAL_MS],
    );
    const sweep = { task: () => Promise.all(scheduled.map((entry) => entry.task())), stopped: false };
    const expired = await devSignIn(t, 'expired-user');
    const live = await devSignIn(t, 'live-user');
    const db = t.database.db;
    const sessionsOf = async (login: string) =>
      Number(
        (
          await sql<{
            n: string;
          }>`SELECT count(*) AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.login = ${login}`.execute(db)
        ).rows[0]!.n,
      );
    await sql`UPDATE sessions SET expires_at = now() - interval '1 second'
      WHERE user_id = (SELECT id FROM users WHERE login = 'expired-user')`.execute(db);
    assert.equal(await sessionsOf('expired-user'), 1, 'an expired session stays until the sweep');

    await sweep.task();
    assert.equal(await sessionsOf('expired-user'), 0);
    assert.equal(await sessionsOf('live-user'), 1);
    const me = await graphql(t, live, '{ me { login } }');
    assert.deepEqual(me.json().data.me, { login: 'live-user' });
    assert.equal((await graphql(t, expired, '{ me { login } }')).json().data.me, null);
    assert.equal(scheduled[0]!.stopped, false);
  } finally {
    await t.close();
  }
  assert.equal(scheduled[0]!.stopped, true, 'the sweep stops with the app');
  assert.equal(scheduled[1]!.stopped, true, 'the pruning too');
});
