// Compile-only checks (no database): the text of the SQL never depends on what the user typed.
// What the SQL selects is checked against a real database in filter.property.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { Condition } from './filter.fields.ts';
import { parseSearch, SEARCH_FIELDS } from './filter.parser.ts';
import { applySearch, escapeLike, SEARCH_COLUMNS } from './filter.sql.ts';

const db = new Kysely<DB>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

type RepoCondition = Condition<keyof typeof SEARCH_FIELDS.repositories.fields>;
const compile = (conditions: RepoCondition[]) =>
  applySearch(db.selectFrom('repositories').select('id'), conditions, SEARCH_COLUMNS.repositories).compile();

/** The same condition with a neutral value: the SQL text must not change. */
function blank(condition: RepoCondition): RepoCondition {
  switch (condition.kind) {
    case 'string':
      return { ...condition, value: 'x' };
    case 'number':
      return { ...condition, value: 0 };
    case 'boolean':
      return { ...condition, value: true };
    case 'date':
      return { ...condition, from: new Date(0) };
  }
}

test('every resource maps exactly its searchable fields to columns', () => {
  for (const resource of Object.keys(SEARCH_FIELDS) as (keyof typeof SEARCH_FIELDS)[]) {
    assert.deepEqual(
      Object.keys(SEARCH_COLUMNS[resource]).sort(),
      Object.keys(SEARCH_FIELDS[resource].fields).sort(),
      resource,
    );
  }
});

test('values only ever travel as parameters', () => {
  const hostile = fc.oneof(
    fc.string({
      unit: fc.constantFrom("'", '"', '\\', ';', '-', '%', '_', '$', '1', ' ', ':', '>', '=', 'a', 'n', 'e', 's', 'r'),
    }),
    fc.string({ unit: 'binary' }),
  );
  const fields = fc.constantFrom(
    '',
    'name:',
    'language:',
    'stars:',
    'stars>=',
    'archived:',
    'created_at:',
    'updated_at<',
  );
  const query = fc.array(fc.tuple(fields, hostile).map(([f, v]) => f + v)).map((terms) => terms.join(' '));
  fc.assert(
    fc.property(query, (q) => {
      const conditions = parseSearch(q, SEARCH_FIELDS.repositories);
      const compiled = compile(conditions);
      assert.equal(compiled.sql, compile(conditions.map(blank)).sql);
      for (const c of conditions) {
        const value =
          c.kind === 'date' ? c.from.toISOString() : c.kind === 'string' && !c.exact ? escapeLike(c.value) : c.value;
        assert.ok(compiled.parameters.includes(value));
      }
    }),
    { numRuns: 1000 },
  );
});

test('the generated SQL for each kind of condition', () => {
  const q = 'name:a%b name:"A B" stars:>=10 archived:no created_at:2024-02-29 updated_at<2024-01-01';
  const { sql, parameters } = compile(parseSearch(q, SEARCH_FIELDS.repositories));
  const r = '"repositories".';
  assert.equal(
    sql,
    `select "id" from "repositories" where cds_unaccent(${r}"name") ilike cds_unaccent('%' || $1::text || '%') escape '\\' and ${r}"name" = $2` +
      ` and ${r}"stars_count" >= $3::bigint and ${r}"is_archived" = $4` +
      ` and (${r}"created_at" >= $5::timestamptz and ${r}"created_at" < ($6::timestamptz + interval '1 day'))` +
      ` and ${r}"updated_at" < $7::timestamptz`,
  );
  const [day, newYear] = ['2024-02-29T00:00:00.000Z', '2024-01-01T00:00:00.000Z'];
  assert.deepEqual(parameters, ['a\\%b', 'A B', 10, false, day, day, newYear]);
});

test('LIKE wildcards and the escape character are escaped', () => {
  const cases = [
    ['100%', '100\\%'],
    ['a_b', 'a\\_b'],
    ['C:\\x', 'C:\\\\x'],
    ['%_\\', '\\%\\_\\\\'],
    ['plain', 'plain'],
  ];
  for (const [value, escaped] of cases) assert.equal(escapeLike(value as string), escaped);
});
