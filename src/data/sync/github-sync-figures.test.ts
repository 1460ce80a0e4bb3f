// The figures quoted in docs/sync.md: time and requests of a first, second and third sync of the
// recorded fixtures, at GitHub's page size of 100. Run with --test-reporter=spec to see them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDb, type TestDatabase } from '../../../test/helpers.ts';
import { loadFixtureOrganizations, startGithubApiStandIn, type GithubApiStandIn } from '../../../test/github-api-standin.ts';
import { up as createSyncTables } from '../../db/migrations/0004_sync_state.ts';
import { changedRows } from '../report.ts';
import { syncGithub } from './github-sync.ts';

let database: TestDatabase;
let standIn: GithubApiStandIn;
before(async () => {
  database = await createTestDb();
  await createSyncTables(database.db as never);
  standIn = await startGithubApiStandIn(await loadFixtureOrganizations());
});
after(async () => {
  await standIn.close();
  await database.drop();
});

test('first, second and third run over the fixtures', async (t) => {
  const organizations = standIn.organizations.map((o) => String(o.organization.login));
  for (const name of ['first', 'second', 'third']) {
    const before = standIn.requests.length;
    const report = await syncGithub(database.db, { apiUrl: standIn.url, token: 'test-token', organizations });
    const answers = standIn.requests.slice(before);
    const tally = new Map<number, number>();
    for (const { status } of answers) tally.set(status, (tally.get(status) ?? 0) + 1);
    const statuses = [...tally].map(([status, count]) => `${count}×${status}`);
    t.diagnostic(`${name} run (${database.kind}): ${report.durationMs} ms, ${answers.length} requests (${statuses.join(', ')}), `
      + `${changedRows(report.counts)} rows written, ${report.repositories} repositories`);
    if (name !== 'first') assert.equal(changedRows(report.counts), 0);
  }
});
