// The reference's official TypeScript client (`owasp-nest`), unchanged, against the real service
// listening on 127.0.0.1 with the bundled data and a real API key. The client validates every response
// with its own models (zod) and throws on any mismatch, so every call below that returns is also a
// conformance check. Its 22 operations other than snapshots: every record of every list, on every
// page, and every detail; each filter and ordering it offers; one typed 404 per resource.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Nest } from 'owasp-nest';
import * as errors from 'owasp-nest/models/errors';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS, devSignIn, graphql, inDays } from './auth.ts';
import { issue, member, organization } from './factories.ts';
import { milestone, release } from './factories-github.ts';
import { bumpDataVersion } from '../src/announcements/counters.queries.ts';

let t: TestApp;
let nest: Nest;

before(async () => {
  t = await buildTestApp({ importBundled: true, env: { REST_AUTH: 'required', AUTH_DEV_LOGIN: 'true' } });
  const db = t.database.db;
  // The bundled data has one published member, no organization with a location, no closed issue or
  // open milestone: a few more records so that every filter has something to tell apart.
  const repo = await db
    .selectFrom('repositories')
    .select(['id'])
    .where('owner_login', '=', 'octokit-fixture-org')
    .orderBy('id')
    .executeTakeFirstOrThrow();
  await member(db, {
    login: 'nest-ana',
    name: 'Ana',
    company: 'OWASP',
    location: 'Lisbon',
    url: 'https://github.com/nest-ana',
  });
  await member(db, {
    login: 'nest-bo',
    name: 'Bo',
    company: 'Acme',
    location: 'Paris',
    url: 'https://github.com/nest-bo',
  });
  await member(db, {
    login: 'nest-cy',
    name: 'Cy',
    company: 'OWASP',
    location: 'Paris',
    url: 'https://github.com/nest-cy',
  });
  await organization(db, { login: 'nest-org', name: 'Nest Org', location: 'Lisbon' });
  await issue(db, {
    repository_id: repo.id,
    number: 9001,
    state: 'closed',
    url: 'https://github.com/octokit-fixture-org/x/issues/9001',
  });
  await milestone(db, {
    repository_id: repo.id,
    number: 77,
    state: 'open',
    url: 'https://github.com/octokit-fixture-org/x/milestone/77',
  });
  await release(db, { repository_id: repo.id, tag_name: 'v9.9.9', name: 'Nine' });
  t.app.shared.watcher.set(await bumpDataVersion(db));

  // A real key, made the way a user makes one: signed in, through GraphQL.
  const browser = await devSignIn(t, 'client-tester');
  const created = (
    await graphql(t, browser, CLIENT_DOCUMENTS.createApiKey, { name: 'sdk', expiresAt: inDays(1) })
  ).json();
  const rawKey = created.data.createApiKey.rawKey as string;
  assert.ok(rawKey);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  nest = new Nest({ apiKey: rawKey, serverURL: `http://127.0.0.1:${port}` });
});
after(() => t.close());

type Item = Record<string, unknown>;
interface Paged {
  items: Item[];
  currentPage: number;
  totalPages: number;
  totalCount: number;
  hasNext: boolean;
  hasPrevious: boolean;
}
type Lister = (request: Record<string, unknown>) => Promise<Paged>;

/** Every item of a list, page by page (each page validated by the client), checking the envelope. */
async function everyPage(list: Lister, request: Record<string, unknown> = {}, pageSize = 25): Promise<Item[]> {
  const items: Item[] = [];
  for (let page = 1; ; page++) {
    const body = await list({ ...request, page, pageSize });
    assert.equal(body.currentPage, page);
    assert.equal(body.hasPrevious, page > 1);
    assert.ok(body.items.length <= pageSize);
    items.push(...body.items);
    if (!body.hasNext) {
      assert.equal(body.totalPages, Math.max(1, page));
      assert.equal(items.length, body.totalCount, 'every record, once');
      return items;
    }
  }
}

const rows = async <T>(query: string) => (await sql.raw<T>(query).execute(t.database.db)).rows;
const sorted = (values: unknown[]) => values.map(String).sort();
const published = 'created_at IS NOT NULL AND updated_at IS NOT NULL';

// The client's operations, as functions of a plain request (its own types are checked at the call).
const lists: Record<string, Lister> = {
  chapters: (r) => nest.chapters.listChapters(r) as Promise<unknown> as Promise<Paged>,
  committees: (r) => nest.committees.listCommittees(r) as Promise<unknown> as Promise<Paged>,
  events: (r) => nest.events.listEvents(r) as Promise<unknown> as Promise<Paged>,
  issues: (r) => nest.issues.listIssues(r) as Promise<unknown> as Promise<Paged>,
  members: (r) => nest.community.listMembers(r) as Promise<unknown> as Promise<Paged>,
  milestones: (r) => nest.milestones.listMilestones(r) as Promise<unknown> as Promise<Paged>,
  organizations: (r) => nest.community.listOrganizations(r) as Promise<unknown> as Promise<Paged>,
  projects: (r) => nest.projects.listProjects(r) as Promise<unknown> as Promise<Paged>,
  releases: (r) => nest.releases.listReleases(r) as Promise<unknown> as Promise<Paged>,
  repositories: (r) => nest.repositories.listRepositories(r) as Promise<unknown> as Promise<Paged>,
  sponsors: (r) => nest.sponsors.listSponsors(r) as Promise<unknown> as Promise<Paged>,
};

test('every list, every page: each record of the data once, validated by the client', async () => {
  const expected: Record<string, [field: string, query: string]> = {
    chapters: [
      'key',
      'SELECT key AS v FROM chapters WHERE is_active AND latitude IS NOT NULL AND longitude IS NOT NULL',
    ],
    committees: ['key', 'SELECT key AS v FROM committees WHERE is_active'],
    events: ['key', 'SELECT key AS v FROM events'],
    issues: ['url', 'SELECT url AS v FROM issues'],
    members: ['login', `SELECT login AS v FROM members WHERE ${published}`],
    milestones: ['url', 'SELECT url AS v FROM milestones'],
    organizations: ['login', `SELECT login AS v FROM organizations WHERE ${published}`],
    projects: ['key', 'SELECT key AS v FROM projects WHERE is_active'],
    releases: ['tagName', 'SELECT tag_name AS v FROM releases'],
    repositories: ['name', 'SELECT name AS v FROM repositories'],
    sponsors: ['key', 'SELECT key AS v FROM sponsors'],
  };
  for (const [resource, [field, query]] of Object.entries(expected)) {
    const items = await everyPage(lists[resource]!);
    const want = (await rows<{ v: string }>(query)).map((r) => r.v);
    assert.ok(want.length > 0, `${resource}: no record to check`);
    assert.deepEqual(sorted(items.map((i) => i[field])), sorted(want), resource);
  }
  // The fields issue 11 added, as the client reads them.
  const project = (await nest.projects.listProjects({ pageSize: 1 })).items[0]!;
  assert.ok(['code', 'documentation', 'other', 'tool'].includes(project.type));
  const sponsor = (await nest.sponsors.listSponsors({ pageSize: 100 })).items.find((s) => s.url !== '')!;
  assert.match(sponsor.url, /^https?:\/\//);
  assert.equal(typeof sponsor.imageUrl, 'string');
  const ana = (await nest.community.listMembers({ ordering: 'login' })).items.find((m) => m.login === 'nest-ana')!;
  assert.equal(ana.url, 'https://github.com/nest-ana');
  assert.ok(ana.createdAt instanceof Date && ana.updatedAt instanceof Date);
});

test('every detail of every record answers through the client with that record', async () => {
  const keyed = async <T extends { key?: string | null; login?: string }>(
    query: string,
    get: (id: string) => Promise<T>,
    name: string,
  ) => {
    const ids = await rows<{ id: string; name: string }>(query);
    assert.ok(ids.length > 0, query);
    for (const { id, name: expectedName } of ids) {
      const body = await get(id);
      assert.equal((body as { name?: string }).name, expectedName, `${name} ${id}`);
    }
  };
  await keyed(
    'SELECT key AS id, name FROM chapters WHERE is_active AND latitude IS NOT NULL AND longitude IS NOT NULL',
    (chapterId) => nest.chapters.getChapter({ chapterId }),
    'chapter',
  );
  await keyed(
    'SELECT key AS id, name FROM committees WHERE is_active',
    (committeeId) => nest.committees.getCommittee({ committeeId }),
    'committee',
  );
  await keyed('SELECT key AS id, name FROM events', (eventId) => nest.events.getEvent({ eventId }), 'event');
  await keyed(
    'SELECT key AS id, name FROM sponsors',
    (sponsorId) => nest.sponsors.getSponsor({ sponsorId }),
    'sponsor',
  );
  await keyed(
    `SELECT login AS id, name FROM members WHERE ${published}`,
    (memberId) => nest.community.getMember({ memberId }),
    'member',
  );
  await keyed(
    `SELECT login AS id, name FROM organizations WHERE ${published}`,
    (organizationId) => nest.community.getOrganization({ organizationId }),
    'organization',
  );
  const leaderKeys: string[] = [];
  await keyed(
    'SELECT key AS id, name FROM projects WHERE is_active',
    async (projectId) => {
      const project = await nest.projects.getProject({ projectId });
      assert.equal(project.key.toLowerCase(), projectId.toLowerCase());
      leaderKeys.push(...project.leaders.flatMap((l) => (l.key ? [l.key] : [])));
      return project;
    },
    'project',
  );
  // A leader's key, where there is one, names a member the client can get.
  for (const memberId of new Set(leaderKeys)) await nest.community.getMember({ memberId });

  const inRepository = async (table: string, column: string) =>
    rows<{
      o: string;
      r: string;
      v: string;
      title: string;
    }>(`SELECT r.owner_login AS o, r.name AS r, x.${column}::text AS v, x.${table === 'releases' ? 'name' : 'title'} AS title
      FROM ${table} x JOIN repositories r ON r.id = x.repository_id ORDER BY x.id`);
  for (const { o, r, v, title } of await inRepository('issues', 'number')) {
    assert.equal((await nest.issues.getIssue({ organizationId: o, repositoryId: r, issueId: Number(v) })).title, title);
  }
  for (const { o, r, v, title } of await inRepository('milestones', 'number')) {
    const body = await nest.milestones.getMilestone({ organizationId: o, repositoryId: r, milestoneId: Number(v) });
    assert.equal(body.title, title);
  }
  for (const { o, r, v, title } of await inRepository('releases', 'tag_name')) {
    const body = await nest.releases.getRelease({ organizationId: o, repositoryId: r, releaseId: v });
    assert.deepEqual([body.tagName, body.name], [v, title]);
  }
  for (const { o, r } of await rows<{ o: string; r: string }>('SELECT owner_login AS o, name AS r FROM repositories')) {
    assert.equal((await nest.repositories.getRepository({ organizationId: o, repositoryId: r })).name, r);
  }
});

/** The filtered list is exactly the records the query names, and differs from the whole list. */
async function assertFilter(
  resource: string,
  request: Record<string, unknown>,
  field: string,
  query: string,
): Promise<void> {
  const label = `${resource} ${JSON.stringify(request)}`;
  const [all, filtered] = [await everyPage(lists[resource]!), await everyPage(lists[resource]!, request)];
  const want = (await rows<{ v: string }>(query)).map((r) => r.v);
  assert.deepEqual(sorted(filtered.map((i) => i[field])), sorted(want), label);
  assert.ok(
    filtered.length > 0 && filtered.length < all.length,
    `${label}: ${filtered.length} of ${all.length}, the filter must tell records apart`,
  );
}

test('each filter the client offers narrows the list to the right records', async () => {
  await assertFilter(
    'projects',
    { type: ['code'] },
    'key',
    "SELECT key AS v FROM projects WHERE is_active AND type = 'code'",
  );
  await assertFilter(
    'projects',
    { type: ['documentation', 'other'] },
    'key',
    "SELECT key AS v FROM projects WHERE is_active AND type IN ('documentation', 'other')",
  );
  await assertFilter(
    'projects',
    { level: 'flagship' },
    'key',
    "SELECT key AS v FROM projects WHERE is_active AND level = 'flagship'",
  );
  await assertFilter(
    'projects',
    { q: 'name:security level:lab' },
    'key',
    "SELECT key AS v FROM projects WHERE is_active AND name ILIKE '%security%' AND level ILIKE '%lab%'",
  );
  await assertFilter(
    'events',
    { category: ['global'] },
    'key',
    "SELECT key AS v FROM events WHERE category = 'global'",
  );
  await assertFilter(
    'events',
    { category: ['appsec_days', 'partner'] },
    'key',
    "SELECT key AS v FROM events WHERE category IN ('appsec_days', 'partner')",
  );
  await assertFilter('events', { latitudeGte: 40 }, 'key', 'SELECT key AS v FROM events WHERE latitude >= 40');
  await assertFilter(
    'events',
    { isUpcoming: true },
    'key',
    "SELECT key AS v FROM events WHERE coalesce(end_date, start_date) >= (now() at time zone 'UTC')::date",
  );
  await assertFilter(
    'chapters',
    { country: 'india' },
    'key',
    "SELECT key AS v FROM chapters WHERE is_active AND latitude IS NOT NULL AND longitude IS NOT NULL AND lower(country) = 'india'",
  );
  await assertFilter(
    'chapters',
    { latitudeLte: 0, longitudeGte: 0 },
    'key',
    'SELECT key AS v FROM chapters WHERE is_active AND latitude <= 0 AND longitude >= 0',
  );
  await assertFilter('sponsors', { isMember: false }, 'key', 'SELECT key AS v FROM sponsors WHERE NOT is_member');
  await assertFilter(
    'sponsors',
    { memberType: 'Gold' },
    'key',
    "SELECT key AS v FROM sponsors WHERE member_type = 'Gold'",
  );
  await assertFilter(
    'sponsors',
    { sponsorType: 'silver' },
    'key',
    "SELECT key AS v FROM sponsors WHERE lower(sponsor_type) = 'silver'",
  );
  await assertFilter(
    'members',
    { company: 'owasp' },
    'login',
    `SELECT login AS v FROM members WHERE ${published} AND lower(company) = 'owasp'`,
  );
  await assertFilter(
    'members',
    { location: 'Paris' },
    'login',
    `SELECT login AS v FROM members WHERE ${published} AND location = 'Paris'`,
  );
  await assertFilter(
    'organizations',
    { location: 'lisbon' },
    'login',
    `SELECT login AS v FROM organizations WHERE ${published} AND lower(location) = 'lisbon'`,
  );
  await assertFilter('issues', { state: 'closed' }, 'url', "SELECT url AS v FROM issues WHERE state = 'closed'");
  await assertFilter(
    'issues',
    { organization: 'SFERIK' },
    'url',
    "SELECT i.url AS v FROM issues i JOIN repositories r ON r.id = i.repository_id WHERE r.owner_login = 'sferik'",
  );
  await assertFilter(
    'issues',
    { organization: 'sferik', repository: 'rails_admin', state: 'open' },
    'url',
    "SELECT i.url AS v FROM issues i JOIN repositories r ON r.id = i.repository_id WHERE r.name = 'rails_admin' AND i.state = 'open'",
  );
  await assertFilter('milestones', { state: 'open' }, 'url', "SELECT url AS v FROM milestones WHERE state = 'open'");
  await assertFilter(
    'milestones',
    { organization: 'codertocat' },
    'url',
    "SELECT m.url AS v FROM milestones m JOIN repositories r ON r.id = m.repository_id WHERE r.owner_login = 'Codertocat'",
  );
  await assertFilter(
    'releases',
    { tagName: 'v9.9.9' },
    'tagName',
    "SELECT tag_name AS v FROM releases WHERE tag_name = 'v9.9.9'",
  );
  await assertFilter(
    'releases',
    { organization: 'Codertocat', repository: 'Hello-World' },
    'tagName',
    "SELECT x.tag_name AS v FROM releases x JOIN repositories r ON r.id = x.repository_id WHERE r.name = 'Hello-World'",
  );
  await assertFilter(
    'repositories',
    { organizationId: 'octokit-fixture-org' },
    'name',
    "SELECT name AS v FROM repositories WHERE owner_login = 'octokit-fixture-org'",
  );
});

type Value = string | number | null;
const valueOf = (item: Item, field: string): Value => {
  const value = item[field];
  return value instanceof Date ? value.getTime() : value === undefined ? null : (value as Value);
};
/** PostgreSQL's order: nulls last ascending, first descending. */
const inOrder = (a: Value, b: Value, descending: boolean): boolean => {
  if (a === null || b === null) return descending ? a === null || b !== null : b === null;
  return descending ? a >= b : a <= b;
};
const camel = (name: string) => name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());

test('each ordering the client offers sorts the whole list by that field, both ways', async () => {
  const orderings: Record<string, string[]> = {
    chapters: ['created_at', 'updated_at', 'latitude', 'longitude'],
    committees: ['created_at', 'updated_at'],
    events: ['start_date', 'end_date', 'latitude', 'longitude'],
    issues: ['created_at', 'updated_at'],
    members: ['created_at', 'updated_at', 'name', 'login'],
    milestones: ['created_at', 'updated_at'],
    organizations: ['created_at', 'updated_at'],
    projects: ['created_at', 'updated_at'],
    releases: ['created_at', 'published_at'],
    repositories: ['created_at', 'updated_at'],
    sponsors: ['name'],
  };
  for (const [resource, fields] of Object.entries(orderings)) {
    const count = (await lists[resource]!({ pageSize: 1 })).totalCount;
    for (const field of fields) {
      for (const ordering of [field, `-${field}`]) {
        const items = await everyPage(lists[resource]!, { ordering }, 100);
        assert.equal(items.length, count, `${resource} ${ordering}`);
        for (let i = 1; i < items.length; i++) {
          const [a, b] = [valueOf(items[i - 1]!, camel(field)), valueOf(items[i]!, camel(field))];
          assert.ok(inOrder(a, b, ordering.startsWith('-')), `${resource} ${ordering}: ${String(a)} then ${String(b)}`);
        }
      }
    }
  }
  // The orderings issue 11 added change the members' order the way their names say.
  const logins = async (ordering: 'name' | '-name' | 'login' | '-login') =>
    (await nest.community.listMembers({ ordering })).items.map((m) => m.login).filter((l) => l.startsWith('nest-'));
  assert.deepEqual(await logins('login'), ['nest-ana', 'nest-bo', 'nest-cy']);
  assert.deepEqual(await logins('-login'), ['nest-cy', 'nest-bo', 'nest-ana']);
  assert.deepEqual(await logins('-name'), ['nest-cy', 'nest-bo', 'nest-ana']);
});

test('a missing record is the typed 404 of its resource, with its message', async () => {
  // Thunks: each call starts when its turn comes, so no rejection waits unobserved.
  const cases: [() => Promise<unknown>, new (...args: never[]) => Error, string][] = [
    [() => nest.chapters.getChapter({ chapterId: 'no-such-chapter' }), errors.ChapterError, 'Chapter not found'],
    [
      () => nest.committees.getCommittee({ committeeId: 'no-such-committee' }),
      errors.CommitteeError,
      'Committee not found',
    ],
    [() => nest.events.getEvent({ eventId: 'no-such-event' }), errors.EventError, 'Event not found'],
    [
      () => nest.issues.getIssue({ organizationId: 'sferik', repositoryId: 'rails_admin', issueId: 999_999 }),
      errors.IssueError,
      'Issue not found',
    ],
    [() => nest.community.getMember({ memberId: 'no-such-member' }), errors.MemberError, 'Member not found'],
    [
      () =>
        nest.milestones.getMilestone({
          organizationId: 'Codertocat',
          repositoryId: 'Hello-World',
          milestoneId: 999_999,
        }),
      errors.MilestoneError,
      'Milestone not found',
    ],
    [
      () => nest.community.getOrganization({ organizationId: 'no-such-org' }),
      errors.OrganizationError,
      'Organization not found',
    ],
    [() => nest.projects.getProject({ projectId: 'no-such-project' }), errors.ProjectError, 'Project not found'],
    [
      () =>
        nest.releases.getRelease({ organizationId: 'Codertocat', repositoryId: 'Hello-World', releaseId: 'v0-none' }),
      errors.ReleaseError,
      'Release not found',
    ],
    [
      () => nest.repositories.getRepository({ organizationId: 'sferik', repositoryId: 'no-such-repo' }),
      errors.RepositoryError,
      'Repository not found',
    ],
    [() => nest.sponsors.getSponsor({ sponsorId: 'no-such-sponsor' }), errors.SponsorError, 'Sponsor not found'],
  ];
  for (const [call, type, message] of cases) {
    await assert.rejects(call(), (error: unknown) => {
      assert.ok(error instanceof type, `${message}: ${String(error)}`);
      assert.equal((error as unknown as { statusCode: number }).statusCode, 404);
      assert.equal((error as unknown as { data$: { message: string } }).data$.message, message);
      return true;
    });
  }
  // An unpublished member (no GitHub profile yet) is a 404 like a missing one.
  const [stub] = await rows<{ login: string }>('SELECT login FROM members WHERE created_at IS NULL LIMIT 1');
  await assert.rejects(nest.community.getMember({ memberId: stub!.login }), errors.MemberError);
});

test('without a valid key the client gets 401', async () => {
  const { port } = t.app.server.address() as AddressInfo;
  const anonymous = new Nest({ apiKey: 'cds_not-a-key', serverURL: `http://127.0.0.1:${port}` });
  await assert.rejects(
    anonymous.chapters.listChapters({}),
    (error: unknown) => (error as { statusCode?: number }).statusCode === 401,
  );
});
