// The figures quoted in docs/sync.md: time and requests of a first, second and third sync of the
// recorded fixtures, at GitHub's page size of 100. Run with --test-reporter=spec to see them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useFixtureSync } from '../../../../test/github-api-standin.ts';
import { changedRows } from '../../base/resource-counts.ts';
import { syncGithub } from './github.sync.ts';

const fixture = useFixtureSync();

test('first, second and third run over the fixtures', async (t) => {
  const organizations = fixture.standIn.organizations.map((o) => String(o.organization.login));
  for (const name of ['first', 'second', 'third']) {
    const before = fixture.standIn.requests.length;
    const report = await syncGithub(fixture.database.db, {
      apiUrl: fixture.standIn.url,
      clock: fixture.clock,
      token: 'test-token',
      organizations,
    });
    const answers = fixture.standIn.requests.slice(before);
    const tally = new Map<number, number>();
    for (const { status } of answers) tally.set(status, (tally.get(status) ?? 0) + 1);
    const statuses = [...tally].map(([status, count]) => `${count}×${status}`);
    t.diagnostic(
      `${name} run (${fixture.database.kind}): ${report.durationMs} ms, ${answers.length} requests (${statuses.join(', ')}), ` +
        `${changedRows(report.counts)} rows written, ${report.repositories} repositories`,
    );
    if (name !== 'first') assert.equal(changedRows(report.counts), 0);
  }
});
