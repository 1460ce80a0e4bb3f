import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createTestDb, type TestDatabase } from '../../test/helpers.ts';
import { OPERATORS, type Condition, type FieldSpec, type Operator } from './filter.fields.ts';
import { MAX_QUERY_LENGTH, parseSearch, SEARCH_FIELDS } from './filter.parser.ts';
import { applySearch, SEARCH_COLUMNS } from './filter.sql.ts';

const SPECS: FieldSpec[] = Object.values(SEARCH_FIELDS);
const DAY_MS = 86_400_000;
/** Days since 1970-01-01 of a UTC date; setUTCFullYear because Date.UTC maps years 0–99 to 19xx. */
function dayNumber(year: number, month: number, day: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime() / DAY_MS;
}

// ---------------------------------------------------------------- query text generators

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const anyUnit = fc.oneof(
  { weight: 10, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: loneSurrogate },
);
const separator = fc.constantFrom(' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u3000', '\u0000', '\u001f');
const ascii = (chars: string) => fc.constantFrom(...chars.split(''));
const fieldName = fc.oneof(
  fc.constantFrom(...new Set(SPECS.flatMap((spec) => Object.keys(spec.fields)))),
  fc.constantFrom('', 'foo', '__proto__', 'constructor', 'STARS', 'Created_At', 'n\u0000ame', 'for\u212Aks'),
  fc.string({ unit: anyUnit, maxLength: 8 }),
);
const fieldSeparator = fc.constantFrom(
  '',
  ':',
  ':>',
  ':>=',
  ':<',
  ':<=',
  ':=',
  '>',
  '>=',
  '<',
  '<=',
  '=',
  '::',
  '<>',
  '=>',
);
const chaosValue = fc.oneof(
  fc.string({ unit: ascii('ab"\\ :<>=%_'), maxLength: 20 }),
  fc.string({ unit: anyUnit, maxLength: 20 }).map((v) => `"${v}`),
  fc.string({ unit: anyUnit, maxLength: 20 }).map((v) => `"${v}"`),
  fc.constantFrom(
    '1',
    '-0',
    '1e3',
    '0x1f',
    'NaN',
    'Infinity',
    '9007199254740993',
    '2024-02-29',
    '2023-02-29',
    '20240229',
    'OFF',
  ),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
);
// Size 'max' so that lengths really spread up to the limit instead of staying small.
const longToken = fc.string({ unit: anyUnit, minLength: 100, maxLength: MAX_QUERY_LENGTH, size: 'max' });
const chaosQuery = fc
  .array(fc.tuple(fieldName, fieldSeparator, chaosValue, separator), { maxLength: 12 })
  .map((terms) => terms.map((parts) => parts.join('')).join(''));
const anyQuery = fc.oneof(
  fc.string({ unit: anyUnit, maxLength: 60 }),
  chaosQuery,
  fc.tuple(fieldName, fieldSeparator, fc.constantFrom('', '"'), longToken).map((parts) => parts.join('')),
);

// ---------------------------------------------------------------- well-formedness

const KEYS: Record<Condition['kind'], string[]> = {
  string: ['exact', 'field', 'kind', 'value'],
  number: ['field', 'kind', 'op', 'value'],
  boolean: ['field', 'kind', 'value'],
  date: ['field', 'from', 'kind', 'op'],
};

function assertWellFormed(condition: Condition, spec: FieldSpec): void {
  assert.ok(Object.hasOwn(spec.fields, condition.field), `known field ${condition.field}`);
  assert.equal(condition.kind, spec.fields[condition.field]);
  assert.deepEqual(Object.keys(condition).sort(), KEYS[condition.kind]);
  switch (condition.kind) {
    case 'string':
      assert.ok(condition.value.length > 0);
      assert.equal(Buffer.from(condition.value).toString(), condition.value, 'no lone surrogates');
      assert.doesNotMatch(condition.value, condition.exact ? /\p{Cc}/u : /[\s\p{Cc}]/u);
      assert.equal(typeof condition.exact, 'boolean');
      break;
    case 'number':
      assert.ok(Number.isSafeInteger(condition.value) && OPERATORS.includes(condition.op));
      break;
    case 'boolean':
      assert.equal(typeof condition.value, 'boolean');
      break;
    case 'date': {
      const time = condition.from.getTime();
      assert.ok(OPERATORS.includes(condition.op) && time % DAY_MS === 0);
      assert.ok(condition.from.getUTCFullYear() >= 1 && condition.from.getUTCFullYear() <= 9999);
      break;
    }
  }
}

test('the parser never throws and returns only well-formed conditions', () => {
  let found = 0;
  fc.assert(
    fc.property(anyQuery, (q) => {
      for (const spec of SPECS) {
        for (const condition of parseSearch(q, spec)) {
          assertWellFormed(condition, spec);
          found += 1;
        }
      }
    }),
    { numRuns: 2000 },
  );
  // Not vacuous: the generators reach the typed branches, not only dropped terms.
  assert.ok(found > 2000, `only ${found} conditions in 2000 queries`);
});

// ---------------------------------------------------------------- writing conditions as text

const anyCase = (text: string) =>
  fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((upper) => [...text].map((ch, i) => (upper[i] ? ch.toUpperCase() : ch)).join(''));
const quote = (value: string) => `"${value.replace(/[\\"]/g, '\\$&')}"`;
const pad = (n: number, width: number) => String(n).padStart(width, '0');
const BOOLEAN_WORDS = { true: ['true', '1', 'yes', 'on'], false: ['false', '0', 'no', 'off'] };

/** One way of writing `condition` that the grammar must read back as exactly that condition. */
function writeCondition(condition: Condition, spec: FieldSpec): fc.Arbitrary<string> {
  const field = anyCase(condition.field);
  const opForms = (op: Operator, value: string) =>
    fc
      .tuple(field, fc.constantFrom(...(op === '=' ? [':', ':=', '='] : [`:${op}`, op])))
      .map(([f, sep]) => `${f}${sep}${value}`);
  switch (condition.kind) {
    case 'string': {
      const value = condition.exact ? quote(condition.value) : condition.value;
      const freeText = condition.field === spec.defaultField && (condition.exact || !/[:<>=]/.test(value));
      return fc.oneof(
        field.map((f) => `${f}:${value}`),
        ...(freeText ? [fc.constant(value)] : []),
      );
    }
    case 'number':
      return opForms(condition.op, String(condition.value));
    case 'boolean':
      return fc
        .tuple(field, fc.constantFrom(...BOOLEAN_WORDS[`${condition.value}`]).chain(anyCase))
        .map(([f, word]) => `${f}:${word}`);
    case 'date': {
      const d = condition.from;
      const [y, m, day] = [pad(d.getUTCFullYear(), 4), pad(d.getUTCMonth() + 1, 2), pad(d.getUTCDate(), 2)];
      return fc.constantFrom(`${y}-${m}-${day}`, `${y}${m}${day}`).chain((text) => opForms(condition.op, text));
    }
  }
}

const bareUnit = fc.oneof(ascii('aAbBzZ09%_\\"\':<>=.-'), fc.constantFrom('é', 'ß', '日', '🦉', 'e\u0301', '\u200b'));
const exactUnit = fc.oneof(bareUnit, fc.constantFrom(' ', '\u00a0', '\\', '"'));
const safeBare = (value: string) => (/^["<>=]/.test(value) ? `a${value}` : value);

function conditionFor(spec: FieldSpec): fc.Arbitrary<Condition> {
  return fc.constantFrom(...Object.keys(spec.fields)).chain((field): fc.Arbitrary<Condition> => {
    switch (spec.fields[field]) {
      case 'string':
        return fc.oneof(
          fc
            .string({ unit: bareUnit, minLength: 1, maxLength: 12 })
            .map((v): Condition => ({ kind: 'string', field, value: safeBare(v), exact: false })),
          fc
            .string({ unit: exactUnit, minLength: 1, maxLength: 12 })
            .map((value): Condition => ({ kind: 'string', field, value, exact: true })),
        );
      case 'number':
        return fc
          .record({ op: fc.constantFrom(...OPERATORS), value: fc.maxSafeInteger() })
          .map((c): Condition => ({ kind: 'number', field, ...c }));
      case 'boolean':
        return fc.boolean().map((value): Condition => ({ kind: 'boolean', field, value }));
      default:
        return fc
          .record({
            op: fc.constantFrom(...OPERATORS),
            day: fc.integer({ min: dayNumber(1, 1, 1), max: dayNumber(9999, 12, 31) }),
          })
          .map(({ op, day }): Condition => ({ kind: 'date', field, op, from: new Date(day * DAY_MS) }));
    }
  });
}

/** Terms the parser must drop without disturbing their neighbours. */
const noise = fc.constantFrom(
  'foo:bar',
  'stars:1.5',
  'forks:0x10',
  'created_at:2023-02-29',
  'name:>x',
  'archived:maybe',
  'archived=1',
  ':x',
  'name:',
);

/** The conditions written in random forms, with noise terms slipped in and random separators around. */
function queryFor(spec: FieldSpec, conditions: Condition[]): fc.Arbitrary<string> {
  const written = fc.tuple(...conditions.map((c) => writeCondition(c, spec)));
  const extra = fc.array(fc.tuple(noise, fc.nat()), { maxLength: 3 });
  const seps = fc.array(separator, { minLength: conditions.length + 4, maxLength: conditions.length + 4 });
  return fc.tuple(written, extra, seps).map(([terms, inserts, between]) => {
    const all: string[] = [...terms];
    for (const [term, at] of inserts) all.splice(at % (all.length + 1), 0, term);
    return all.map((term, i) => `${between[i % between.length]}${term}`).join('') + (between.at(-1) ?? '');
  });
}

/** The parser keeps the first of identical conditions. */
const distinct = (conditions: Condition[]) => [...new Map(conditions.map((c) => [JSON.stringify(c), c])).values()];

test('conditions written in any allowed form are read back exactly, noise dropped', () => {
  const scenario = fc
    .constantFrom(...SPECS)
    .chain((spec) =>
      fc
        .array(conditionFor(spec), { maxLength: 6 })
        .chain((conditions) => queryFor(spec, conditions).map((q) => ({ spec, conditions, q }))),
    );
  fc.assert(
    fc.property(scenario, ({ spec, conditions, q }) => assert.deepEqual(parseSearch(q, spec), distinct(conditions))),
    { numRuns: 1000 },
  );
});

test('a date is accepted exactly when the calendar has that day (oracle: Date arithmetic)', () => {
  // Biased towards the edges: century years, February, days 28–31.
  const parts = fc.tuple(
    fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 1, 1900, 2000, 2023, 2024, 2100, 9999)),
    fc.oneof(fc.integer({ min: 0, max: 13 }), fc.constant(2)),
    fc.oneof(fc.integer({ min: 0, max: 32 }), fc.constantFrom(28, 29, 30, 31)),
    fc.boolean(),
  );
  fc.assert(
    fc.property(parts, ([year, month, day, compact]) => {
      const date = new Date(0);
      date.setUTCFullYear(year, month - 1, day);
      const real =
        year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
      const text = [pad(year, 4), pad(month, 2), pad(day, 2)].join(compact ? '' : '-');
      const expected = real ? [{ kind: 'date', field: 'created_at', op: '=', from: date }] : [];
      assert.deepEqual(parseSearch(`created_at:${text}`, SEARCH_FIELDS.repositories), expected);
    }),
    { numRuns: 3000 },
  );
});

// ---------------------------------------------------------------- SQL against an in-memory model

interface Repo {
  id: string;
  name: string;
  language: string;
  stars_count: number;
  forks_count: number;
  contributors_count: number;
  is_archived: boolean;
  created_at: Date;
  updated_at: Date;
}
type RepoField = keyof typeof SEARCH_FIELDS.repositories.fields;

// Letters come in both cases only for ASCII. PostgreSQL lowers by the database's ctype (C.UTF-8 on
// both engines here, ASCII-only under plain C) while JavaScript applies full Unicode rules
// ('İ' → 'i̇', a final 'Σ' → 'ς'), so the non-ASCII characters used are ones both leave unchanged.
const nameUnit = fc.oneof(
  { weight: 6, arbitrary: ascii('aAbBcC') },
  { weight: 3, arbitrary: ascii('%_\\"\' :-') },
  { weight: 2, arbitrary: fc.constantFrom('é', 'ß', 'ø', '日', '🦉') },
);
const DAYS = ['2023-12-30', '2023-12-31', '2024-01-01', '2024-02-28', '2024-02-29', '2024-03-01', '2024-03-02'];
const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`);
// Rows sit on the inner days, at midnight, one millisecond either side of it, or anywhere in the day.
const msOfDay = fc.oneof(fc.constantFrom(0, 1, DAY_MS - 1), fc.integer({ min: 0, max: DAY_MS - 1 }));
const instant = fc
  .tuple(fc.constantFrom(...DAYS.slice(1, -1)), msOfDay)
  .map(([day, ms]) => new Date(dayStart(day) + ms));
const rowArb = fc.record({
  name: fc.string({ unit: nameUnit, minLength: 1, maxLength: 10 }),
  language: fc.constantFrom(
    'Python',
    'python',
    'PYTHON',
    'C++',
    'C#',
    'Go',
    '',
    '100%',
    '100x',
    'a_b',
    'axb',
    'back\\slash',
    'backs',
  ),
  stars_count: fc.integer({ min: 0, max: 50 }),
  forks_count: fc.integer({ min: 0, max: 50 }),
  contributors_count: fc.integer({ min: 0, max: 5 }),
  is_archived: fc.boolean(),
  created_at: instant,
  updated_at: instant,
});

const VALUE_OF: Record<RepoField, (row: Repo) => string | number | boolean | Date> = {
  name: (r) => r.name,
  language: (r) => r.language,
  stars: (r) => r.stars_count,
  forks: (r) => r.forks_count,
  contributors: (r) => r.contributors_count,
  archived: (r) => r.is_archived,
  created_at: (r) => r.created_at,
  updated_at: (r) => r.updated_at,
};

function compare(a: number, op: Operator, b: number): boolean {
  return { '=': a === b, '>': a > b, '<': a < b, '>=': a >= b, '<=': a <= b }[op];
}

// Unquoted text ignores accents (docs/search.md): what PostgreSQL's unaccent rules do to the non-ASCII letters
// the rows use ('日' and '🦉' have no rule), then case.
const UNACCENTED: Record<string, string> = { é: 'e', ß: 'ss', ø: 'o' };
const fold = (text: string) =>
  Array.from(text, (ch) => UNACCENTED[ch] ?? ch)
    .join('')
    .toLowerCase();

/** The meaning of one condition, written from the contract without looking at the SQL. */
function holds(row: Repo, condition: Condition<RepoField>): boolean {
  const value = VALUE_OF[condition.field](row);
  switch (condition.kind) {
    case 'string':
      if (condition.exact) return value === condition.value;
      return fold(String(value)).includes(fold(condition.value));
    case 'number':
      return compare(value as number, condition.op, condition.value);
    case 'boolean':
      return value === condition.value;
    case 'date': {
      const t = (value as Date).getTime();
      const start = condition.from.getTime();
      const end = start + DAY_MS;
      return { '=': t >= start && t < end, '>': t >= end, '>=': t >= start, '<': t < start, '<=': t < end }[
        condition.op
      ];
    }
  }
}

/** Conditions with values taken from the rows, so that results are neither always empty nor always full. */
function repoCondition(rows: Repo[]): fc.Arbitrary<Condition> {
  const codePoints = (row: Repo, field: 'name' | 'language') => Array.from(row[field]);
  const text = (field: 'name' | 'language') =>
    fc
      .oneof(
        fc.tuple(fc.constantFrom(...rows), fc.nat(), fc.integer({ min: 1, max: 4 })).map(([row, at, len]) => {
          const chars = codePoints(row, field);
          return chars.slice(at % chars.length, (at % chars.length) + len).join('');
        }),
        fc.string({ unit: nameUnit, minLength: 1, maxLength: 3 }),
      )
      .filter((v) => v.length > 0);
  return fc.oneof(
    fc.tuple(fc.constantFrom('name', 'language' as const), fc.boolean()).chain(([field, exact]) =>
      (exact
        ? fc.oneof(
            fc.constantFrom(...rows).map((r) => r[field]),
            text(field),
          )
        : text(field)
      ).map((value): Condition => ({ kind: 'string', field, value, exact })),
    ),
    fc
      .record({
        field: fc.constantFrom('stars', 'forks', 'contributors'),
        op: fc.constantFrom(...OPERATORS),
        value: fc.oneof(
          fc.integer({ min: -1, max: 51 }),
          fc.constantFrom(2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER),
        ),
      })
      .map((c): Condition => ({ kind: 'number', ...c })),
    fc.boolean().map((value): Condition => ({ kind: 'boolean', field: 'archived', value })),
    fc
      .record({
        field: fc.constantFrom('created_at', 'updated_at'),
        op: fc.constantFrom(...OPERATORS),
        day: fc.constantFrom(...DAYS),
      })
      .map(({ field, op, day }): Condition => ({ kind: 'date', field, op, from: new Date(dayStart(day)) })),
  );
}

describe('SQL against an in-memory model (one database, 200 random rows)', () => {
  let database: TestDatabase;
  let rows: Repo[] = [];
  const SEED = Date.now() % 2 ** 31;
  const QUERY_RUNS = 500;

  before(async () => {
    database = await createTestDb();
    const generated = fc.sample(rowArb, { numRuns: 200, seed: SEED });
    const inserted = await database.db
      .insertInto('repositories')
      .values(generated.map((row, i) => ({ ...row, github_id: i + 1, owner_login: `owner-${i}`, topics: '[]' })))
      .returning(['id', 'github_id'])
      .execute();
    const idOf = new Map(inserted.map((r) => [String(r.github_id), String(r.id)]));
    rows = generated.map((row, i) => ({ ...row, id: idOf.get(String(i + 1)) as string }));
  });
  after(() => database?.drop());

  const spec = SEARCH_FIELDS.repositories;
  /** Runs `q` through parser and SQL, checks the ids against the model, returns how many matched. */
  async function compareWithModel(q: string): Promise<number> {
    const conditions = parseSearch(q, spec);
    const select = database.db.selectFrom('repositories').select('id');
    const found = await applySearch(select, conditions, SEARCH_COLUMNS.repositories).execute();
    const expected = rows.filter((row) => conditions.every((c) => holds(row, c))).map((row) => row.id);
    assert.deepEqual(found.map((r) => String(r.id)).sort(), expected.sort(), q);
    return expected.length;
  }

  test('edge values reach PostgreSQL as parameters and agree with the model', async () => {
    const edges = [
      'created_at:9999-12-31',
      'created_at>9999-12-31',
      'updated_at<=99991231',
      'created_at<0001-01-01',
      'created_at:>=0001-01-01',
      'stars:>-9007199254740991',
      'forks<=9007199254740991',
      'contributors:2147483648',
      "name:'",
      "name:\"x' OR '1'='1\"",
      'name:%',
      'name:_',
      'name:\\',
      'name:"\\"',
      'name:"%"',
      "language:';drop_table_repositories;--",
      'name:"\u0000"',
      'name:\u0000x',
      '"\ud800"',
      'name:🦉 name:日',
    ];
    for (const q of edges) await compareWithModel(q);
    assert.equal(await compareWithModel(''), rows.length);
  });

  test('SQL selects exactly the rows the in-memory model selects', async (t) => {
    t.diagnostic(`seed ${SEED} (rows and queries), ${database.kind}`);
    const query = fc.array(repoCondition(rows), { maxLength: 3 }).chain((conditions) => queryFor(spec, conditions));
    let informative = 0;
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const selected = await compareWithModel(q);
        if (selected > 0 && selected < rows.length) informative += 1;
      }),
      { numRuns: QUERY_RUNS, seed: SEED },
    );
    t.diagnostic(
      `${QUERY_RUNS} queries in ${Math.round(performance.now() - started)} ms, ${informative} with a partial result`,
    );
    assert.ok(informative >= QUERY_RUNS / 4, `only ${informative} of ${QUERY_RUNS} queries selected a proper subset`);
  });
});
