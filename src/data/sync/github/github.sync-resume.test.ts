// A GitHub sync cut off part-way (the stand-in stops answering) keeps only whole repositories, and the
// next run finishes the job from where it stopped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { servedRecords, storedRecords, useFixtureSync } from '../../../../test/github-api-standin.ts';
import { changedRows } from '../../base/resource-counts.ts';
import { SyncStopped, syncGithub } from './github.sync.ts';

const fixture = useFixtureSync();

const run = () =>
  syncGithub(fixture.database.db, {
    apiUrl: fixture.standIn.url,
    clock: fixture.clock,
    organizations: ['octokit-fixture-org', 'codeforamerica', 'Octocoders', 'octokit'],
    perPage: 5,
    retryBaseMs: 10,
  });

async function syncedRepositories(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(DISTINCT scope)::int AS n FROM sync_requests WHERE scope LIKE 'github:repo:%'`.execute(
    fixture.database.db,
  );
  return rows[0]!.n;
}

test('an interrupted run stores whole repositories only; the next run completes the mirror', async () => {
  fixture.standIn.dropAfter(90);
  await assert.rejects(
    run(),
    (error: unknown) => error instanceof SyncStopped && /stopped after .* repositories/.test(error.message),
  );
  fixture.standIn.dropAfter(undefined);

  const done = await syncedRepositories();
  assert.ok(done > 0 && done < 39, `${done} repositories were synced before the cut`);
  const stored = await storedRecords(fixture.database.db);
  for (const { repository, issues, labels } of fixture.standIn.organizations.flatMap((o) => o.repositories)) {
    for (const [kind, served] of [
      ['issues', issues],
      ['labels', labels],
    ] as const) {
      const present = served.filter((record) => stored[kind].includes(String(record.id))).length;
      assert.ok(
        present === 0 || present === served.length,
        `${String(repository.full_name)}: ${present} of ${served.length} ${kind}`,
      );
    }
  }

  const resumed = await run();
  assert.deepEqual(resumed.failed, []);
  assert.deepEqual(await storedRecords(fixture.database.db), servedRecords(fixture.standIn.organizations));
  assert.equal(await syncedRepositories(), 39);
  const again = await run();
  assert.equal(changedRows(again.counts), 0);
});
