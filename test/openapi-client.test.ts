// Test tier: system (runs tsc over the generated client): `npm run test:system`, CI.
// A client generated from our own /api/v0/openapi.json by a maintained generator (openapi-typescript, with
// openapi-fetch) compiles under `tsc --strict` and reads a real answer of every operation of the document, against
// the app listening on 127.0.0.1 with the bundled data and a real key. Also: the document has the reference's shape
// (tags, component names, `ApiKey`, ordering enums), its examples validate, and the headers it documents are sent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import * as reference from 'owasp-nest/models/operations';
import { buildTestApp, type TestApp } from './app.ts';
import { CLIENT_DOCUMENTS as DOC, devSignIn, graphql, inDays } from './auth.ts';
import { clientProgram, isList, operations, operationUrl, type OpenApi, type Operation } from './openapi-program.ts';
import { DUMPS_OPERATION_ID } from '../src/api/v0/dumps/dumps.routes.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const TAGS = [
  // Ours: GET /api/v0/changes/, the change log (issue 43).
  'Changes',
  'Chapters',
  'Committees',
  'Community',
  // Ours: GET /api/v0/contribute/, issues for newcomers (issue 47).
  'Contribute',
  // Ours: GET /api/v0/dumps/, the bulk dumps' manifest (issue 28).
  'Dumps',
  'Events',
  'Issues',
  'Labels',
  'Milestones',
  'Projects',
  'Releases',
  'Repositories',
  // Ours, beyond the reference's: GET /api/v0/search/ (issue 26).
  'Search',
  'Sponsors',
];

let t: TestApp;
let origin: string;
let key: string;
let doc: OpenApi;
let dir: string;

before(async () => {
  t = await buildTestApp({ importBundled: true, env: { AUTH_DEV_LOGIN: 'true', REST_AUTH: 'required' } });
  const browser = await devSignIn(t, 'sdk-user');
  key = (await graphql(t, browser, DOC.createApiKey, { name: 'generated client', expiresAt: inDays(1) })).json().data
    .createApiKey.rawKey;
  origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
  doc = (await (await fetch(`${origin}/api/v0/openapi.json`)).json()) as OpenApi;
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-client-'));
});
after(async () => {
  await t.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${origin}${url}`, { headers: { 'x-api-key': key, ...headers } });
const fill = (template: string, values: Record<string, string>) =>
  template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? `missing-${name}`));

/**
 * Real path parameters for every operation that has some, taken from the data: `/x/{id}` and `/x/{id}/…` from the
 * first item of the list `/x/` (its key, login, tag or number), so that routes added later are covered; the
 * repository-scoped GitHub records (`{organization_id}/{repository_id}/…`) from the database.
 */
async function pathValues(): Promise<Map<string, Record<string, string>>> {
  const values = new Map<string, Record<string, string>>();
  for (const { path: template, op } of operations(doc)) {
    const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    if (names.length === 0) continue;
    const [, , , resource] = template.split('/');
    if (names[0] === 'organization_id') {
      values.set(op.operationId, await repositoryScoped(resource!));
      continue;
    }
    assert.equal(names.length, 1, `${op.operationId}: no rule for the parameters ${names}`);
    const page = (await (await get(`/api/v0/${resource}/?page_size=1`)).json()) as {
      items?: Record<string, unknown>[];
    };
    const item = page.items?.[0];
    assert.ok(item, `${op.operationId}: the list /api/v0/${resource}/ is empty, no value for ${names[0]}`);
    const id = ['key', 'login', 'tag_name', 'number']
      .map((field) => item[field])
      .find((v) => v !== undefined && v !== null);
    values.set(op.operationId, { [names[0]!]: String(id) });
  }
  return values;
}

async function repositoryScoped(resource: string): Promise<Record<string, string>> {
  const column = { issues: 'number', milestones: 'number', releases: 'tag_name' }[resource];
  const row = column
    ? (
        await sql<
          Record<string, string>
        >`SELECT r.owner_login AS organization_id, r.name AS repository_id, x.${sql.ref(column)}::text AS value
        FROM ${sql.table(resource)} x JOIN repositories r ON r.id = x.repository_id ORDER BY x.id LIMIT 1`.execute(
          t.database.db,
        )
      ).rows[0]
    : (
        await sql<
          Record<string, string>
        >`SELECT owner_login AS organization_id, name AS repository_id FROM repositories ORDER BY id LIMIT 1`.execute(
          t.database.db,
        )
      ).rows[0];
  assert.ok(row, `no ${resource} in the bundled data`);
  const last = { issues: 'issue_id', milestones: 'milestone_id', releases: 'release_id' }[resource];
  return {
    organization_id: row.organization_id!,
    repository_id: row.repository_id!,
    ...(last ? { [last]: row.value! } : {}),
  };
}

test('a client generated from the document compiles under tsc --strict and reads a real answer of every operation', async () => {
  // openapi-typescript lints the document (Redocly's minimal rules) and throws on an error; the full OpenAPI 3.1
  // schema check is in api-conformance.test.ts.
  const generated = astToString(await openapiTS(doc as never, { silent: true }));
  await fs.writeFile(path.join(dir, 'schema.ts'), generated);
  await fs.writeFile(path.join(dir, 'main.ts'), clientProgram(doc, await pathValues()));
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await fs.writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        allowImportingTsExtensions: true,
        types: [],
        skipLibCheck: true,
      },
      files: ['main.ts'],
    }),
  );
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');

  const tsc = await run(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir, '--noEmit', '--strict'],
    { cwd: dir },
  ).catch((error: { stdout: string }) => assert.fail(`the generated client does not compile:\n${error.stdout}`));
  assert.equal(tsc.stdout, '');

  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: dir,
    env: { ...process.env, BASE_URL: origin, API_KEY: key },
  });
  const results = JSON.parse(stdout) as Record<string, { status: number; body: Record<string, unknown> | undefined }>;
  const ids = operations(doc).map(({ op }) => op.operationId);
  assert.ok(ids.length >= 23, `only ${ids.length} operations in the document`);
  assert.deepEqual(Object.keys(results).sort(), [...ids].sort());
  for (const { op } of operations(doc)) {
    const { status, body } = results[op.operationId]!;
    assert.equal(status, 200, `${op.operationId} answered ${status}`);
    assert.ok(body && typeof body === 'object', `${op.operationId}: no body`);
    if (isList(op)) {
      assert.ok(Array.isArray(body.items) && typeof body.total_count === 'number', `${op.operationId}: not a page`);
      assert.ok((body.items as unknown[]).length <= 2, `${op.operationId}: page_size was not applied`);
    } else {
      assert.ok(Object.keys(body).length > 0, `${op.operationId}: empty record`);
    }
  }
});

test('the document has the reference’s tags, component names and security scheme', () => {
  assert.deepEqual(
    doc.tags.map((tag) => tag.name),
    TAGS,
  );
  assert.deepEqual(doc.components.securitySchemes, {
    ApiKey: {
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
      description: 'A personal API key (manage keys at /settings/api-keys).',
    },
  });
  assert.deepEqual(doc.security, [{ ApiKey: [] }]);
  const refName = (op: Operation, status: string) =>
    (op.responses[status]?.content?.['application/json']?.schema.$ref as string | undefined)?.split('/').pop();
  const community = new Set(['members', 'organizations', 'snapshots', 'deleted']);
  for (const { path: template, op } of operations(doc)) {
    // Ours, beyond the reference: its names are not the reference's (a manifest, no 404 of a record).
    if (op.operationId === DUMPS_OPERATION_ID) {
      assert.deepEqual([op.tags, refName(op, '200')], [['Dumps'], 'DumpManifest']);
      continue;
    }
    const resource = template.split('/')[3]!;
    const tag = community.has(resource) ? 'Community' : resource.charAt(0).toUpperCase() + resource.slice(1);
    assert.deepEqual(op.tags, [tag], op.operationId);
    assert.equal(refName(op, '400'), 'ValidationErrorSchema', op.operationId);
    if (isList(op)) {
      const paged = refName(op, '200')!;
      assert.match(paged, /^Paged[A-Z]\w+$/, op.operationId);
      const items = (doc.components.schemas[paged]!.properties as Record<string, { items: { $ref: string } }>).items!
        .items.$ref;
      assert.equal(items, `#/components/schemas/${paged.slice('Paged'.length)}`, op.operationId);
    } else {
      const detail = refName(op, '200')!;
      assert.match(detail, /^[A-Z]\w+Detail$/, op.operationId);
      assert.equal(refName(op, '404'), detail.replace(/Detail$/, 'Error'), op.operationId);
    }
  }
  // The reference's own names, for the operations the reference's client knows.
  const names = Object.keys(doc.components.schemas);
  for (const name of [
    'Chapter',
    'ChapterDetail',
    'PagedChapter',
    'ChapterError',
    'Committee',
    'CommitteeDetail',
    'PagedCommittee',
    'CommitteeError',
    'Event',
    'EventDetail',
    'PagedEvent',
    'EventError',
    'Issue',
    'IssueDetail',
    'PagedIssue',
    'IssueError',
    'Member',
    'MemberDetail',
    'PagedMember',
    'MemberError',
    'Milestone',
    'MilestoneDetail',
    'PagedMilestone',
    'MilestoneError',
    'Organization',
    'OrganizationDetail',
    'PagedOrganization',
    'OrganizationError',
    'Project',
    'ProjectDetail',
    'PagedProject',
    'ProjectError',
    'Release',
    'ReleaseDetail',
    'PagedRelease',
    'ReleaseError',
    'Repository',
    'RepositoryDetail',
    'PagedRepository',
    'RepositoryError',
    'Sponsor',
    'SponsorDetail',
    'PagedSponsor',
    'SponsorError',
    'Label',
    'PagedLabel',
    'Leader',
    'ValidationErrorSchema',
  ]) {
    assert.ok(names.includes(name), `no component ${name}`);
  }
  assert.deepEqual(
    names.filter((name) => /\d$/.test(name)),
    [],
    'two different schemas under one name',
  );
});

test('ordering is an enum of the values the service accepts, with every value the reference’s client sends', async () => {
  const referenceEnums: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(reference)) {
    const match = /^List(\w+)Ordering$/.exec(name);
    if (match && value && typeof value === 'object') {
      referenceEnums[`list_${match[1]!.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).slice(1)}`] = Object.values(
        value as Record<string, string>,
      );
    }
  }
  assert.ok(Object.keys(referenceEnums).length >= 17, 'the reference client’s ordering enums were not found');
  const ordered = operations(doc).filter(({ op }) => op.parameters?.some((p) => p.name === 'ordering'));
  for (const { path: template, op } of ordered) {
    const values = (op.parameters!.find((p) => p.name === 'ordering')!.schema!.enum ?? []) as string[];
    assert.ok(values.length >= 2, `${op.operationId}: no ordering enum`);
    for (const value of values.filter((v) => !v.startsWith('-')))
      assert.ok(values.includes(`-${value}`), `${op.operationId}: ${value} without -${value}`);
    for (const value of referenceEnums[op.operationId] ?? [])
      assert.ok(values.includes(value), `${op.operationId}: the reference offers ${value}`);
    if (template.includes('{')) continue;
    for (const value of values)
      assert.equal((await get(`${template}?ordering=${value}&page_size=1`)).status, 200, `${op.operationId} ${value}`);
    const bad = await get(`${template}?ordering=not_an_ordering`);
    assert.equal(bad.status, 400);
    assert.deepEqual(
      new Set(
        String(((await bad.json()) as { errors: { msg: string }[] }).errors[0]!.msg)
          .split(': ')[1]!
          .split(' (')[0]!
          .split(', '),
      ),
      new Set(values),
    );
  }
});

test('every response has a description and an example that validates against its schema', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(doc, 'openapi');
  for (const { path: template, op } of operations(doc)) {
    assert.ok(op.responses['304'], `${op.operationId}: 304 not documented`);
    assert.ok(
      op.parameters?.some((p) => p.in === 'header' && p.name === 'If-None-Match'),
      `${op.operationId}: If-None-Match`,
    );
    for (const [status, response] of Object.entries(op.responses)) {
      assert.ok(
        response.description && response.description !== 'Default Response',
        `${op.operationId} ${status}: no description`,
      );
      for (const [type, media] of Object.entries(response.content ?? {})) {
        assert.ok(media.example !== undefined, `${op.operationId} ${status}: no example`);
        const pointer = ['paths', template, 'get', 'responses', status, 'content', type, 'schema']
          .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
          .join('/');
        const check = ajv.getSchema(`openapi#/${pointer}`)!;
        assert.ok(
          check(media.example),
          `${op.operationId} ${status}: the example does not validate: ${ajv.errorsText(check.errors)}`,
        );
      }
    }
  }
});

test('the headers the document names are the ones the service sends, 304 included', async () => {
  const values = await pathValues();
  // A second instance on the same database: only its rate limit differs.
  const limited = await buildTestApp({ env: { RATE_LIMIT_PER_SECOND: '1' }, sharedDatabase: t.database });
  try {
    const headersOf = (op: Operation, status: string) => Object.keys(op.responses[status]?.headers ?? {});
    const check = (op: Operation, status: string, res: Response) => {
      assert.equal(String(res.status), status, op.operationId);
      for (const name of headersOf(op, status))
        assert.ok(res.headers.has(name), `${op.operationId} ${status} lacks ${name}`);
    };
    for (const { path: template, op } of operations(doc)) {
      const url = operationUrl(template, op, values.get(op.operationId) ?? {});
      const ok = await get(url);
      check(op, '200', ok);
      check(op, '304', await get(url, { 'if-none-match': ok.headers.get('etag')! }));
      check(op, '401', await fetch(`${origin}${url}`));
      if (isList(op)) check(op, '400', await get(`${url}${url.includes('?') ? '&' : '?'}page=0`));
      else if (op.operationId !== DUMPS_OPERATION_ID)
        check(
          op,
          '404',
          await get(
            fill(
              template,
              Object.fromEntries(
                Object.keys(values.get(op.operationId)!).map((k) => [
                  k,
                  /issue|milestone/.test(k) ? '999999' : 'no-such-record',
                ]),
              ),
            ),
          ),
        );
    }
    const list = operations(doc).find(({ op }) => op.operationId === 'list_chapters')!.op;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => limited.app.inject({ method: 'GET', url: '/api/v0/chapters/' })),
    );
    const refused = answers.find((res) => res.statusCode === 429);
    assert.ok(refused, 'no 429 with a limit of 1 per second');
    for (const name of headersOf(list, '429')) assert.ok(refused.headers[name.toLowerCase()], `429 lacks ${name}`);
  } finally {
    await limited.close();
  }
});
