// Reads the recorded GitHub responses listed in manifest.json and turns them into records. Nothing is
// written but the import's TEMP staging tables (with a transaction): a bad file leaves the data as it was.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../../../db/index.ts';
import { ImportError } from '../../base/import-error.ts';
import { GithubCollector } from '../../github/github.collect.ts';
import { isApiObject } from '../../github/github.fields.ts';
import type { GithubData } from '../../github/github.records.ts';
import { labelOverrides, resolveMemberships, Skipped, skippedCounts } from '../../github/github.resolve.ts';
import { collectResponse } from '../../github/github.responses.ts';
import { DatasetStage, type DatasetData } from './github-dataset.stage.ts';
import { NO_TRACE, type PhaseTrace } from '../import.trace.ts';

const MANIFEST = 'manifest.json';

interface ManifestEntry {
  file: string;
  requests: string[];
  shape?: 'object' | 'array';
  count?: number;
}

/**
 * With `db` (a transaction), issues, labels, accounts and repositories are staged in TEMP tables of that
 * transaction as they are read (github-dataset.stage.ts) instead of being kept: memory stays bounded whatever
 * their number, and a bad file still changes nothing (the transaction is rolled back).
 */
export async function readGithubData(dir: string): Promise<GithubData>;
export async function readGithubData(dir: string, db: Db, tracePhase?: PhaseTrace): Promise<DatasetData>;
export async function readGithubData(
  dir: string,
  db?: Db,
  tracePhase: PhaseTrace = NO_TRACE,
): Promise<GithubData | DatasetData> {
  const stage = db ? new DatasetStage(db) : undefined;
  if (stage) tracePhase('start');
  const collector = new GithubCollector(stage);
  for (const entry of await readManifest(dir)) {
    const body = await readJson(dir, entry.file);
    checkShape(entry, body);
    collectResponse(collector, entry.requests[0]!, body, entry.file);
    await stage?.flush();
  }
  return stage ? resolveStaged(collector, stage, tracePhase) : collector.finish();
}

// resolvePending's steps, in its order (so the same error is thrown first), in SQL; only memberships and
// the label lists given per issue stay in memory, given the repositories and organizations they name.
async function resolveStaged(
  collector: GithubCollector,
  stage: DatasetStage,
  tracePhase: PhaseTrace,
): Promise<DatasetData> {
  await stage.flush(true);
  tracePhase('read and staged');
  await stage.chooseAccounts();
  tracePhase('accounts chosen');
  const { issueLabels, memberships } = collector;
  const repositoryIds = await stage.repositoryIds(issueLabels.map((p) => p.repository.toLowerCase()));
  const skippedMilestones = await stage.resolveScoped('milestones');
  const skippedLabels = await stage.resolveLabels();
  tracePhase('labels chosen');
  const skippedReleases = await stage.resolveScoped('releases');
  const issues = await stage.issues.resolve(labelOverrides(issueLabels, repositoryIds), () => stage.labelNames());
  tracePhase('issues chosen');
  const logins = memberships.flatMap(({ organization }) =>
    'login' in organization ? [organization.login.toLowerCase()] : [],
  );
  const byLogin = await stage.organizationIds(logins);
  const counts = skippedCounts(new Skipped());
  counts.labels += skippedLabels + issues.skippedLabels;
  counts.issues += issues.skippedIssues;
  counts.milestones += skippedMilestones;
  counts.releases += skippedReleases;
  return {
    organizations: [],
    members: [],
    repositories: [],
    issues: [],
    labels: [],
    milestones: [],
    releases: [],
    organizationMembers: resolveMemberships(memberships, byLogin),
    pullRequests: collector.pullRequests,
    skipped: counts,
    staged: stage,
  };
}

async function readManifest(dir: string): Promise<ManifestEntry[]> {
  const manifest = await readJson(dir, MANIFEST);
  if (!Array.isArray(manifest)) throw new ImportError(MANIFEST, undefined, 'expected a list of files');
  return manifest.map((entry, index) => {
    const record = `entry ${index + 1}`;
    if (!isApiObject(entry) || typeof entry.file !== 'string' || !isInside(entry.file)) {
      throw new ImportError(MANIFEST, record, '"file" must be a path inside the folder');
    }
    const requests = entry.requests;
    if (!Array.isArray(requests) || requests.length === 0 || !requests.every((r) => typeof r === 'string')) {
      throw new ImportError(MANIFEST, `${record} (${entry.file})`, '"requests" must list the request(s) answered');
    }
    const shape = entry.shape === 'object' || entry.shape === 'array' ? entry.shape : undefined;
    const count = typeof entry.count === 'number' ? entry.count : undefined;
    return { file: entry.file, requests, shape, count };
  });
}

function isInside(file: string): boolean {
  const normalized = path.normalize(file);
  return !path.isAbsolute(normalized) && !normalized.startsWith('..') && normalized !== '.';
}

async function readJson(dir: string, file: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, file), 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    const detail = file === MANIFEST ? 'missing' : 'listed in manifest.json but missing';
    throw new ImportError(file, undefined, missing ? detail : `unreadable: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ImportError(file, undefined, `not valid JSON: ${(error as Error).message}`);
  }
}

// The manifest records what each response looked like; a body that disagrees is not that response.
function checkShape(entry: ManifestEntry, body: unknown): void {
  const shape = Array.isArray(body) ? 'array' : isApiObject(body) ? 'object' : typeof body;
  if (entry.shape !== undefined && shape !== entry.shape) {
    const expected = entry.shape === 'array' ? 'an array' : 'an object';
    throw new ImportError(entry.file, undefined, `expected ${expected}, found ${shape}`);
  }
  if (entry.count !== undefined && Array.isArray(body) && body.length !== entry.count) {
    throw new ImportError(entry.file, undefined, `expected ${entry.count} records, found ${body.length}`);
  }
}
