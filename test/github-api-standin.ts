// A stand-in for the GitHub REST API on 127.0.0.1, serving the recorded responses of data/github/ as
// organizations with their repositories, issues, labels, milestones and releases, and the profile of
// every account they mention (`GET /users/{login}`, `GET /orgs/{login}`). It paginates with Link
// headers, answers If-None-Match with 304, and injects the failures GitHub really produces.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before } from 'node:test';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../src/db/schema.ts';
import { fakeClock, type FakeClock } from './fake-clock.ts';
import { createTestDb, type TestDatabase } from './helpers.ts';
import { ROOT } from './process.ts';

type Json = Record<string, unknown>;

export interface StandInRepository {
  repository: Json;
  issues: Json[];
  labels: Json[];
  milestones: Json[];
  releases: Json[];
  /** Commits and contributors, for the counts (per_page=1 and the Link `last` page); default one each. */
  commits?: Json[];
  contributors?: Json[];
}

export interface StandInOptions {
  /** The clock of the `at` of each logged request and of the rate-limit headers (default Date.now). */
  now?: () => number;
  /** false: the repository listing ignores `type` (serves private ones too), to test the client's own check. */
  honourType?: boolean;
}

export interface StandInOrganization {
  organization: Json;
  members: Json[];
  repositories: StandInRepository[];
}

/** `drop` destroys the connection without an answer; the others answer as GitHub does. */
export type Fault = 'secondary-rate-limit' | 'rate-limit' | 'server-error' | 'drop';

export interface LoggedRequest {
  method: string;
  path: string;
  /** 0 when the connection was dropped. */
  status: number;
  at: number;
  authorization: string | undefined;
}

export interface GithubApiStandIn {
  url: string;
  organizations: StandInOrganization[];
  /**
   * Profiles by lower-case login, served by `GET /users/{login}` (and `GET /orgs/{login}` for an
   * organization): every account the organizations mention. Tests change or delete entries.
   */
  profiles: Map<string, Json>;
  requests: LoggedRequest[];
  /**
   * Answers the next request whose path matches with `fault` (once). `retryAfter`: seconds of a secondary
   * limit's Retry-After (default 1); `resetIn`: seconds to x-ratelimit-reset of a spent primary limit (default 1).
   */
  fail(
    fault: Fault,
    match?: (path: string) => boolean,
    options?: { retryAfter?: number; resetIn?: number; status?: 403 | 429 },
  ): void;
  /** Destroys every connection after `count` more requests (undefined: stop doing so). */
  dropAfter(count: number | undefined): void;
  close(): Promise<void>;
}

export const FIXTURES_DIR = path.join(ROOT, 'data/github');
/** The organizations whose recorded responses FIXTURES_DIR holds: what a sync against the stand-in is asked for. */
export const FIXTURE_ORGANIZATIONS = ['octokit-fixture-org', 'codeforamerica', 'Octocoders', 'octokit'];
const REPO_OF = /\/repos\/([^/]+\/[^/]+)\/(labels|milestones|releases)\/[^/]+$/;

/** The recorded objects grouped the way GitHub serves them: one entry per organization seen. */
export async function loadFixtureOrganizations(dir = FIXTURES_DIR): Promise<StandInOrganization[]> {
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as {
    file: string;
    requests: string[];
  }[];
  const pick = <T extends Json>(held: T | undefined, next: T): T => {
    if (!held) return next;
    const [a, b] = [String(held.updated_at ?? ''), String(next.updated_at ?? '')];
    return b > a || (b === a && Object.keys(next).length > Object.keys(held).length) ? next : held;
  };
  const orgs = new Map<string, Json>();
  const repos = new Map<string, Json>();
  const orgOfRepo = new Map<string, string>();
  const members = new Map<string, Json[]>();
  const kinds = {
    issues: new Map<unknown, Json>(),
    labels: new Map<unknown, Json>(),
    milestones: new Map<unknown, Json>(),
    releases: new Map<unknown, Json>(),
  };
  const issueLabels = new Map<string, Json[]>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== 'object' || value === null || 'pull_request' in value) return;
    const o = value as Json;
    if (typeof o.full_name === 'string' && typeof o.owner === 'object')
      repos.set(o.full_name.toLowerCase(), pick(repos.get(o.full_name.toLowerCase()), o));
    if (typeof o.login === 'string' && (o.type === 'Organization' || /\/orgs\/[^/]+$/.test(String(o.url))))
      orgs.set(o.login.toLowerCase(), pick(orgs.get(o.login.toLowerCase()), o));
    if (typeof o.repository_url === 'string') kinds.issues.set(o.id, pick(kinds.issues.get(o.id), o));
    const kind = REPO_OF.exec(String(o.url))?.[2] as 'labels' | 'milestones' | 'releases' | undefined;
    if (kind && typeof o.id === 'number') kinds[kind].set(o.id, pick(kinds[kind].get(o.id), o));
    Object.values(o).forEach(walk);
  };
  for (const { file, requests } of manifest) {
    const body = JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as Json & Json[];
    walk(body);
    const [request = ''] = requests;
    const listed = /^GET \/orgs\/([^/]+)\/(?:public_)?members /.exec(request)?.[1];
    if (listed) members.set(listed.toLowerCase(), body);
    const labelled = /^POST \/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/labels /.exec(request);
    if (labelled) issueLabels.set(`${labelled[1]!.toLowerCase()}#${labelled[2]}`, body);
    const org = (body.organization as Json | undefined)?.login as string | undefined;
    if (org && body.repository)
      orgOfRepo.set(String((body.repository as Json).full_name).toLowerCase(), org.toLowerCase());
    if (org && body.membership) members.set(org.toLowerCase(), [(body.membership as Json).user as Json]);
  }
  const repoOf = (o: Json) =>
    (/\/repos\/([^/]+\/[^/]+)/.exec(String(o.repository_url ?? o.url))?.[1] ?? '').toLowerCase();
  const of = (kind: keyof typeof kinds, name: string) => [...kinds[kind].values()].filter((o) => repoOf(o) === name);
  const served = (name: string): StandInRepository => {
    const labels = new Map(of('labels', name).map((l) => [l.id, l]));
    const milestones = new Map(of('milestones', name).map((m) => [m.id, m]));
    // The current state of each issue: labels as last set, embedded objects as the listings serve them.
    const issues = of('issues', name).map((issue) => {
      const set = issueLabels.get(`${name}#${issue.number}`) ?? (issue.labels as Json[]);
      set.forEach((label) => labels.set(label.id, labels.get(label.id) ?? label));
      const milestone = issue.milestone as Json | null;
      if (milestone) milestones.set(milestone.id, milestones.get(milestone.id) ?? milestone);
      return {
        ...issue,
        labels: set.map((l) => labels.get(l.id)!),
        milestone: milestone && milestones.get(milestone.id)!,
      };
    });
    return {
      repository: repos.get(name)!,
      issues,
      labels: [...labels.values()],
      milestones: [...milestones.values()],
      releases: of('releases', name),
    };
  };
  return [...orgs.entries()].map(([login, organization]) => ({
    organization,
    members: members.get(login) ?? [],
    repositories: [...repos.entries()]
      .filter(([name, repo]) => (orgOfRepo.get(name) ?? String((repo.owner as Json).login).toLowerCase()) === login)
      .map(([name]) => served(name)),
  }));
}

/**
 * GitHub gives every account a full profile; the recordings often hold only the stub embedded in a
 * listing. The stand-in completes those with fixed values (dates derived from the id), as a GitHub
 * would answer; an account recorded in full is served as recorded.
 */
export function profileOf(account: Json): Json {
  if (typeof account.created_at === 'string') return account;
  const at = new Date(Date.UTC(2011, 0, 1) + (Number(account.id) % 100_000) * 3_600_000)
    .toISOString()
    .replace('.000Z', 'Z');
  const organization = account.type === 'Organization';
  return {
    ...account,
    html_url: account.html_url ?? `https://github.com/${String(account.login)}`,
    name: account.name ?? `${String(account.login)} (profile)`,
    company: null,
    blog: '',
    location: organization ? 'Internet' : null,
    email: null,
    bio: null,
    twitter_username: null,
    ...(organization ? { description: '' } : { following: 0 }),
    public_repos: 1,
    followers: 2,
    created_at: at,
    updated_at: at,
  };
}

/** The profile of every account the organizations mention, by lower-case login. */
export function profilesOf(organizations: StandInOrganization[]): Map<string, Json> {
  const profiles = new Map<string, Json>();
  const add = (account: unknown) => {
    const a = account as Json | null | undefined;
    if (!a || typeof a.login !== 'string') return;
    const held = profiles.get(a.login.toLowerCase());
    if (!held || (typeof a.created_at === 'string' && typeof held.created_at !== 'string'))
      profiles.set(a.login.toLowerCase(), profileOf(a));
  };
  for (const { organization, members, repositories } of organizations) {
    add({ ...organization, type: 'Organization' });
    members.forEach(add);
    for (const { repository, issues, milestones, releases } of repositories) {
      add(repository.owner);
      for (const issue of issues)
        [issue.user, issue.assignee, ...((issue.assignees as Json[] | undefined) ?? [])].forEach(add);
      milestones.forEach((milestone) => add(milestone.creator));
      releases.forEach((release) => add(release.author));
    }
  }
  return profiles;
}

export async function startGithubApiStandIn(
  organizations: StandInOrganization[],
  options: StandInOptions = {},
): Promise<GithubApiStandIn> {
  const profiles = profilesOf(organizations);
  const now = options.now ?? Date.now;
  const faults: {
    fault: Fault;
    match: (path: string) => boolean;
    retryAfter: number;
    resetIn: number;
    status: 403 | 429;
  }[] = [];
  let dropBudget: number | undefined;
  let remaining = 5000;
  const requests: LoggedRequest[] = [];

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const entry: LoggedRequest = {
      method: req.method ?? '',
      path: url.pathname + url.search,
      status: 0,
      at: now(),
      authorization: req.headers.authorization,
    };
    requests.push(entry);
    const index = faults.findIndex((f) => f.match(url.pathname));
    const injected = index >= 0 ? faults.splice(index, 1)[0]! : undefined;
    const fault = injected?.fault;
    if (dropBudget !== undefined && dropBudget-- <= 0) return void req.socket.destroy();
    if (fault === 'drop') return void req.socket.destroy();
    const reset = Math.ceil(now() / 1000) + (fault === 'rate-limit' ? (injected?.resetIn ?? 1) : 3600);
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      entry.status = status;
      const text = body === undefined ? '' : JSON.stringify(body);
      res
        .writeHead(status, {
          'content-type': 'application/json; charset=utf-8',
          'x-ratelimit-limit': '5000',
          'x-ratelimit-remaining': String(fault === 'rate-limit' ? 0 : remaining),
          'x-ratelimit-reset': String(reset),
          ...headers,
        })
        .end(text);
    };
    if (fault === 'secondary-rate-limit') {
      return send(
        injected?.status ?? 403,
        { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' },
        { 'retry-after': String(injected?.retryAfter ?? 1) },
      );
    }
    if (fault === 'rate-limit')
      return send(injected?.status ?? 403, { message: 'API rate limit exceeded for user ID 1.' });
    if (fault === 'server-error') return send(500, { message: 'Server Error' });
    const found = route(organizations, profiles, url, options.honourType ?? true);
    if (!found) return send(404, { message: 'Not Found' });
    if (found.status) return send(found.status, found.body);
    const { body, link } = found;
    const etag = `W/"${crypto.createHash('sha1').update(JSON.stringify(body)).digest('hex')}"`;
    if (req.headers['if-none-match'] === etag) return send(304, undefined, { etag, ...link });
    remaining = Math.max(0, remaining - 1);
    send(200, body, { etag, ...link });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    organizations,
    profiles,
    requests,
    fail: (fault, match = () => true, options = {}) =>
      void faults.push({
        fault,
        match,
        retryAfter: options.retryAfter ?? 1,
        resetIn: options.resetIn ?? 1,
        status: options.status ?? 403,
      }),
    dropAfter: (count) => void (dropBudget = count),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function route(
  organizations: StandInOrganization[],
  profiles: Map<string, Json>,
  url: URL,
  honourType: boolean,
): { body: unknown; link?: Record<string, string>; status?: number } | undefined {
  const [, kind, a, b, list] = url.pathname.split('/');
  const q = url.searchParams;
  const profile = profiles.get(decodeURIComponent(a ?? '').toLowerCase());
  if (kind === 'users' && b === undefined) return profile ? { body: profile } : undefined;
  if (kind === 'orgs' && b === undefined) return profile?.type === 'Organization' ? { body: profile } : undefined;
  if (kind === 'orgs') {
    const org = organizations.find((o) => String(o.organization.login).toLowerCase() === a?.toLowerCase());
    if (!org) return undefined;
    if (b === 'repos' && list === undefined) {
      // GitHub's `type`: all (default), public, private (and forks, sources, member: not needed here).
      const type = honourType ? (q.get('type') ?? 'all') : 'all';
      const listed = org.repositories
        .map((r) => r.repository)
        .filter((r) => type === 'all' || (type === 'private') === (r.private === true));
      return page(url, listed);
    }
    if (b === 'public_members' && list === undefined) return page(url, org.members);
    return undefined;
  }
  const segments = url.pathname.split('/').length;
  if (kind !== 'repos' || (segments !== 5 && segments !== 4)) return undefined;
  const name = `${a}/${b}`.toLowerCase();
  const repo = organizations
    .flatMap((o) => o.repositories)
    .find((r) => String(r.repository.full_name).toLowerCase() === name);
  if (!repo) return undefined;
  // The token sees its private repositories too, marked private.
  if (segments === 4) return { body: repo.repository };
  if (list === 'commits') {
    const commits = repo.commits ?? [{ sha: `${String(repo.repository.id)}-1` }];
    return commits.length ? page(url, commits) : { status: 409, body: { message: 'Git Repository is empty.' } };
  }
  if (list === 'contributors') {
    const contributors = repo.contributors ?? [repo.repository.owner as Json];
    return contributors.length ? page(url, contributors) : { status: 204, body: undefined };
  }
  const state = (o: Json) => (q.get('state') ?? 'open') === 'all' || o.state === (q.get('state') ?? 'open');
  if (list === 'issues') {
    const key = q.get('sort') === 'updated' ? 'updated_at' : 'created_at';
    const order = q.get('direction') === 'asc' ? 1 : -1;
    const since = q.get('since') ?? '';
    const issues = repo.issues
      .filter((i) => state(i) && String(i.updated_at) >= since)
      .sort(
        (x, y) => order * String(x[key]).localeCompare(String(y[key])) || order * (Number(x.number) - Number(y.number)),
      );
    return page(url, issues);
  }
  if (list === 'labels') return page(url, repo.labels);
  if (list === 'milestones') return page(url, repo.milestones.filter(state));
  if (list === 'releases') return page(url, repo.releases);
  return undefined;
}

/** One page of a list, with GitHub's Link header (first, prev, next, last) when there is more than one. */
function page(url: URL, items: unknown[]): { body: unknown; link?: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30)));
  const number = Math.max(1, Number(url.searchParams.get('page') ?? 1));
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const at = (n: number) => {
    const target = new URL(url);
    target.searchParams.set('page', String(n));
    return target.toString();
  };
  const rels: [string, number][] = [];
  if (number > 1) rels.push(['first', 1], ['prev', number - 1]);
  if (number < last) rels.push(['next', number + 1], ['last', last]);
  const body = items.slice((number - 1) * perPage, number * perPage);
  return {
    body,
    link: rels.length ? { link: rels.map(([rel, n]) => `<${at(n)}>; rel="${rel}"`).join(', ') } : undefined,
  };
}

/** Ids per table and link table, as sorted strings: what a sync of these organizations must store. */
export type RecordSets = Record<
  | 'organizations'
  | 'members'
  | 'repositories'
  | 'issues'
  | 'labels'
  | 'milestones'
  | 'releases'
  | 'issue_labels'
  | 'issue_assignees'
  | 'issue_milestones'
  | 'organization_members',
  string[]
>;

export function servedRecords(organizations: StandInOrganization[]): RecordSets {
  const sets = Object.fromEntries(
    [
      'organizations',
      'members',
      'repositories',
      'issues',
      'labels',
      'milestones',
      'releases',
      'issue_labels',
      'issue_assignees',
      'issue_milestones',
      'organization_members',
    ].map((k) => [k, new Set<string>()]),
  ) as Record<keyof RecordSets, Set<string>>;
  const person = (account: unknown) => {
    const a = account as Json | null | undefined;
    if (a && a.type !== 'Organization') sets.members.add(String(a.id));
  };
  for (const { organization, members, repositories: all } of organizations) {
    // Private repositories are never stored, nor anything of theirs.
    const repositories = all.filter(
      ({ repository }) => repository.private !== true && (repository.visibility ?? 'public') === 'public',
    );
    sets.organizations.add(String(organization.id));
    for (const member of members) {
      person(member);
      sets.organization_members.add(`${organization.id}/${member.id}`);
    }
    for (const { repository, issues, labels, milestones, releases } of repositories) {
      sets.repositories.add(String(repository.id));
      person(repository.owner);
      for (const issue of issues) {
        sets.issues.add(String(issue.id));
        person(issue.user);
        const assignees = (issue.assignees as Json[] | undefined) ?? (issue.assignee ? [issue.assignee as Json] : []);
        for (const assignee of assignees) {
          person(assignee);
          sets.issue_assignees.add(`${issue.id}/${assignee.id}`);
        }
        for (const label of issue.labels as Json[]) sets.issue_labels.add(`${issue.id}/${label.id}`);
        if (issue.milestone) sets.issue_milestones.add(`${issue.id}/${(issue.milestone as Json).id}`);
      }
      labels.forEach((label) => sets.labels.add(String(label.id)));
      milestones.forEach((milestone) => {
        sets.milestones.add(String(milestone.id));
        person(milestone.creator);
      });
      releases.forEach((release) => {
        sets.releases.add(String(release.id));
        person(release.author);
      });
    }
  }
  return Object.fromEntries(Object.entries(sets).map(([k, v]) => [k, [...v].sort()])) as RecordSets;
}

/** The same sets, read from a database. */
export async function storedRecords(db: Kysely<DB>): Promise<RecordSets> {
  const ids = async (query: string) =>
    (await sql.raw<{ v: string }>(query).execute(db)).rows.map((r) => String(r.v)).sort();
  const pair = (table: string, left: string, leftColumn: string, right: string, rightColumn: string) =>
    ids(
      `SELECT l.github_id || '/' || r.github_id AS v FROM ${table} p JOIN ${left} l ON l.id = p.${leftColumn} JOIN ${right} r ON r.id = p.${rightColumn}`,
    );
  return {
    organizations: await ids('SELECT github_id AS v FROM organizations'),
    members: await ids('SELECT github_id AS v FROM members'),
    repositories: await ids('SELECT github_id AS v FROM repositories'),
    issues: await ids('SELECT github_id AS v FROM issues'),
    labels: await ids('SELECT github_id AS v FROM labels'),
    milestones: await ids('SELECT github_id AS v FROM milestones'),
    releases: await ids('SELECT github_id AS v FROM releases'),
    issue_labels: await pair('issue_labels', 'issues', 'issue_id', 'labels', 'label_id'),
    issue_assignees: await pair('issue_assignees', 'issues', 'issue_id', 'members', 'member_id'),
    issue_milestones: await ids(
      "SELECT i.github_id || '/' || m.github_id AS v FROM issues i JOIN milestones m ON m.id = i.milestone_id",
    ),
    organization_members: await pair(
      'organization_members',
      'organizations',
      'organization_id',
      'members',
      'member_id',
    ),
  };
}

/**
 * The set-up of a GitHub sync test file: a migrated test database and a stand-in serving the
 * recorded fixtures, made before the file's tests and closed after them.
 */
export function useFixtureSync(options: Omit<StandInOptions, 'now'> = {}): {
  readonly database: TestDatabase;
  readonly standIn: GithubApiStandIn;
  /** The clock of the stand-in; pass it to the sync so that both see the same time and nobody waits. */
  readonly clock: FakeClock;
} {
  let database: TestDatabase | undefined;
  let standIn: GithubApiStandIn | undefined;
  const clock = fakeClock();
  before(async () => {
    database = await createTestDb();
    standIn = await startGithubApiStandIn(await loadFixtureOrganizations(), { ...options, now: clock.now });
  });
  after(async () => {
    await standIn?.close();
    await database?.drop();
  });
  return {
    get database() {
      assert.ok(database, 'built in before()');
      return database;
    },
    get standIn() {
      assert.ok(standIn, 'started in before()');
      return standIn;
    },
    clock,
  };
}
