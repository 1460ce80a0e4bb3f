// The mappers and the collector on single objects: old and new response shapes, and what they refuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { BUNDLED_DATA_DIR } from '../import/dataset.import.ts';
import { ImportError } from '../base/import-error.ts';
import { GithubCollector } from './github.collect.ts';
import { mapIssue, mapLabel, mapMember, mapRepository } from './github.mapping.ts';
import { collectResponse } from './github.responses.ts';

const raw = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(BUNDLED_DATA_DIR, 'github', file), 'utf8'));
const clone = <T>(value: T): T => structuredClone(value);
type Json = Record<string, unknown>;

test('a 2013 repository: stars from watchers_count, default branch from master_branch', () => {
  const repository = clone(raw('sferik-rails_admin/repository.json')) as Json;
  delete repository.default_branch;
  const record = mapRepository(repository, 'r.json');
  assert.equal(record.stars_count, 3903);
  assert.equal(record.watchers_count, 3903);
  assert.equal(record.default_branch, 'master');
  assert.equal(record.owner_login, 'sferik');
  assert.deepEqual([record.license, record.topics, record.is_archived], ['', [], false]);
});

test('a current repository: license, topics, subscribers as watchers', () => {
  const recorded = raw('octokit-fixture-org/repository.hello-world.json') as Json;
  const repository = { ...recorded, license: { spdx_id: 'MIT' } };
  const record = mapRepository(repository, 'r.json');
  assert.equal(record.license, 'MIT');
  assert.deepEqual(record.topics, ['fixtures', 'hello', 'hello-world']);
  assert.equal(record.watchers_count, 1);
  assert.equal(record.owner_github_id, 31898100);
});

test('a member never keeps an e-mail address', () => {
  const user = raw('sferik-rails_admin/user.sferik.json') as Json;
  assert.equal(user.email, 'sferik@gmail.com');
  const record = mapMember(user, 'u.json');
  assert.ok(!JSON.stringify(record).includes('@gmail'));
  assert.equal(record.title, '');
  assert.equal(record.public_repositories_count, 83);
});

test('issue assignees: the list, or the single assignee of older responses', () => {
  const issue = clone((raw('octokit-fixture-org/issues.json') as Json[])[0]!);
  const [a, b] = raw('octokit-fixture-org/collaborators.json') as Json[];
  assert.deepEqual(mapIssue({ ...issue, assignees: [a, b] }, 'i.json', 1).assignee_github_ids, [31898046, 31899067]);
  const old: Json = { ...issue, assignee: b };
  delete old.assignees;
  assert.deepEqual(mapIssue(old, 'i.json', 1).assignee_github_ids, [31899067]);
  const record = mapIssue(issue, 'i.json', 1);
  assert.deepEqual([record.body, record.state_reason, record.is_locked], ['', '', false]);
});

test('label colors are stored lower-case and must be six hex digits', () => {
  const label = raw('octokit-fixture-org/label.test-label.json') as Json;
  assert.equal(mapLabel({ ...label, color: 'ABCDEF' }, 'l.json', 1).color, 'abcdef');
  assert.throws(() => mapLabel({ ...label, color: 'red' }, 'l.json', 1), ImportError);
});

test('timestamps: ISO strings or Unix seconds; impossible dates are refused', () => {
  const repository = raw('octokit-fixture-org/repository.hello-world.json') as Json;
  assert.equal(mapRepository({ ...repository, pushed_at: 1557933633 }, 'r.json').pushed_at, '2019-05-15T15:20:33.000Z');
  for (const bad of ['2017-02-30T10:00:00Z', 'yesterday', '2017-09-15', true]) {
    assert.throws(
      () => mapRepository({ ...repository, created_at: bad }, 'r.json'),
      (error: unknown) =>
        error instanceof ImportError && error.record === 'repository 103703892' && /created_at/.test(error.detail),
    );
  }
});

test('the newest version of a record wins, else the most complete one', () => {
  const collector = new GithubCollector();
  const payload = (name: string) => raw(`webhook-payloads/${name}.payload.json`);
  collectResponse(collector, 'webhook delivery: milestone.closed', payload('milestone.closed'), 'a');
  collectResponse(collector, 'GET /users/sferik -> 200', raw('sferik-rails_admin/user.sferik.json'), 'b');
  collectResponse(collector, 'GET /repos/sferik/rails_admin/issues -> 200', raw('sferik-rails_admin/issues.json'), 'c');
  collectResponse(collector, 'webhook delivery: milestone.created', payload('milestone.created'), 'd');
  const data = collector.finish();
  assert.equal(data.milestones.length, 1);
  assert.equal(data.milestones[0]!.state, 'closed');
  assert.equal(data.members.find((m) => m.login === 'sferik')?.name, 'Erik Michaels-Ober');
});

test('labels without an id (2016 issues) are matched by name, else skipped and counted', () => {
  const collector = new GithubCollector();
  collectResponse(collector, 'GET /repos/sferik/rails_admin -> 200', raw('sferik-rails_admin/repository.json'), 'r');
  const pr = (raw('sferik-rails_admin/issues.json') as Json[]).find((i) => i.number === 2724)!;
  const { pull_request: _, ...issue } = pr;
  collectResponse(collector, 'GET /repos/sferik/rails_admin/issues -> 200', [issue], 'i');
  assert.deepEqual(collector.finish().skipped.labels, 1);
  const url = 'https://api.github.com/repos/sferik/rails_admin/labels/needs%20test';
  const label = { id: 99, url, name: 'needs test', color: '006b75' };
  collectResponse(collector, 'GET /repos/sferik/rails_admin/labels -> 200', [label], 'l');
  const data = collector.finish();
  assert.equal(data.skipped.labels, 0);
  assert.deepEqual(data.issues[0]!.label_github_ids, [99]);
});

test('pull requests are kept apart from issues (for health), everything embedded in them left out', () => {
  const collector = new GithubCollector();
  collectResponse(collector, 'GET /repos/sferik/rails_admin -> 200', raw('sferik-rails_admin/repository.json'), 'r');
  const prs = (raw('sferik-rails_admin/issues.json') as Json[]).filter((i) => 'pull_request' in i);
  collectResponse(collector, 'GET /repos/sferik/rails_admin/issues -> 200', prs, 'i');
  const data = collector.finish();
  assert.equal(collector.pullRequests.length, 6);
  assert.deepEqual(data.pullRequests, collector.pullRequests);
  for (const [i, pull] of collector.pullRequests.entries()) {
    assert.equal(pull.repository, 'sferik/rails_admin');
    assert.equal(pull.number, prs[i]!.number);
    assert.equal(pull.state, prs[i]!.state);
    assert.equal(pull.author_login, (prs[i]!.user as Json).login);
    const merged = (prs[i]!.pull_request as Json).merged_at;
    assert.equal(
      pull.merged_at === null ? null : Date.parse(pull.merged_at),
      merged ? Date.parse(String(merged)) : null,
    );
  }
  assert.deepEqual([data.issues.length, data.labels.length, data.skipped.labels], [0, 0, 0]);
  assert.deepEqual(
    data.members.map((m) => m.login),
    ['sferik'],
  );
});

test('a response to a request the importer does not know is refused', () => {
  assert.throws(
    () => collectResponse(new GithubCollector(), 'GET /gists -> 200', [], 'gists.json'),
    (error: unknown) => error instanceof ImportError && error.file === 'gists.json',
  );
});
