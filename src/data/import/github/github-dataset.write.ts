// Stores the dataset import's GitHub records: those read into memory as a sync unit's are (github.write.ts), those
// staged in TEMP tables (github-dataset.stage.ts) upserted and linked in SQL. Run it inside the import's transaction.
import type { Db } from '../../../db/index.ts';
import { tableIsEmpty, withIndexesRebuilt } from '../../github/github.queries.ts';
import type { GithubData, GithubReport } from '../../github/github.records.ts';
import { WriteRun, writeGithubData } from '../../github/github.write.ts';
import { writePullRequests } from '../../github/pull-requests.queries.ts';
import type { DatasetData } from './github-dataset.stage.ts';
import { NO_TRACE, type PhaseTrace } from '../import.trace.ts';

/** Stores what readGithubData read: in memory (without a database) or staged; `tracePhase` is told each phase's end. */
export async function writeGithubDataset(
  db: Db,
  data: GithubData | DatasetData,
  tracePhase: PhaseTrace = NO_TRACE,
): Promise<GithubReport> {
  if ('staged' in data) return writeDataset(db, data, tracePhase);
  return writeGithubData(db, data);
}

/**
 * The dataset import: issues, labels, organizations, members and repositories are in TEMP tables
 * (github-dataset.stage.ts) and are upserted and linked in SQL, in the order and with the counts of
 * writeGithubData (github.write.ts).
 */
async function writeDataset(db: Db, data: DatasetData, tracePhase: PhaseTrace): Promise<GithubReport> {
  const { staged } = data;
  const run = new WriteRun(db, data, { ...staged.totals, issues: staged.issues.total });
  // A first load into empty tables: their secondary indexes and foreign keys are built and checked once at
  // the end instead of row by row (withIndexesRebuilt); and issues that were all inserted now have no links to
  // compare with, so links are only added.
  const empty: string[] = [];
  for (const table of REBUILT) if (await tableIsEmpty(db, table)) empty.push(table);
  const firstLoad = empty.includes('issues');
  for (const table of empty) staged.fresh.add(table);
  await withIndexesRebuilt(
    db,
    empty,
    async () => {
      run.changed('organizations', await staged.writeAccounts('organizations', run.report.organizations, true));
      await staged.writeAccounts('members', run.report.members);
      await staged.writeRepositories(run.report.repositories);
      tracePhase('accounts written');
      await staged.writeScoped('milestones', run.report.milestones);
      await staged.issues.write(run.report.issues);
      tracePhase('issues written');
      await staged.writeLabels(run.report.labels);
      tracePhase('labels written');
      await staged.issues.link(run.report.issues);
      tracePhase('issues linked');
    },
    // On a first load the links are inserted once each (SELECT DISTINCT): their primary key is built at the end too.
    firstLoad ? ['issue_labels', 'issue_assignees'] : [],
  );
  tracePhase('indexes built');
  await run.link('organizations', 'organization_members', await staged.membershipPairs(data.organizationMembers));
  await staged.writeScoped('releases', run.report.releases);
  await writePullRequests(db, data.pullRequests);
  tracePhase('memberships, releases, pull requests written');
  return run.report;
}

/** The tables whose indexes and foreign keys a first load builds at the end (rows are only inserted into them). */
const REBUILT = ['members', 'repositories', 'labels', 'issues', 'issue_labels', 'issue_assignees'];
