import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSearch, SEARCH_FIELDS, type Condition, type FieldSpec, type Operator } from './filter.parser.ts';
import { SEARCH_DESCRIPTION, SEARCH_EXAMPLES, searchDescription } from './filter.docs.ts';

const s = (field: string, value: string, exact = false): Condition => ({ kind: 'string', field, value, exact });
const n = (field: string, op: Operator, value: number): Condition => ({ kind: 'number', field, op, value });
const b = (field: string, value: boolean): Condition => ({ kind: 'boolean', field, value });
const d = (field: string, op: Operator, day: string): Condition => ({
  kind: 'date',
  field,
  op,
  from: new Date(`${day}T00:00:00Z`),
});

type Case = [q: string, expected: Condition[]];

function check(cases: Case[], spec: FieldSpec = SEARCH_FIELDS.repositories) {
  for (const [q, expected] of cases) assert.deepEqual(parseSearch(q, spec), expected, JSON.stringify(q));
}

test('field:value on string fields: substring, names case-insensitive, operators dropped', () => {
  check([
    ['name:nest', [s('name', 'nest')]],
    ['NAME:Nest', [s('name', 'Nest')]],
    ['Language:Python', [s('language', 'Python')]],
    ['name:a:b=c>d', [s('name', 'a:b=c>d')]],
    ['name:100%_\\x', [s('name', '100%_\\x')]],
    ['name:', []],
    ['name:>x', []],
    ['name:=x', []],
    ['name>x', []],
    ['name=x', []],
    ['name<=x', []],
  ]);
  check([['level:flagship NAME:zap', [s('level', 'flagship'), s('name', 'zap')]]], SEARCH_FIELDS.projects);
  check(
    [['country:india Region:Asia x', [s('country', 'india'), s('region', 'Asia'), s('name', 'x')]]],
    SEARCH_FIELDS.chapters,
  );
});

test('numbers: operators after the colon or instead of it; only safe decimal integers', () => {
  const ops: Operator[] = ['=', '>', '<', '>=', '<='];
  check(
    ops.flatMap((op): Case[] => [
      [`stars:${op}10`, [n('stars', op, 10)]],
      [`FORKS${op}10`, [n('forks', op, 10)]],
    ]),
  );
  check([
    ['stars:10', [n('stars', '=', 10)]],
    ['contributors:-5', [n('contributors', '=', -5)]],
    ['stars:007', [n('stars', '=', 7)]],
    ['stars:"42"', [n('stars', '=', 42)]],
    ['stars:>=9007199254740991', [n('stars', '>=', Number.MAX_SAFE_INTEGER)]],
    ['stars: 5', [s('name', '5')]],
    ['stars:"5"x', [n('stars', '=', 5), s('name', 'x')]],
  ]);
  const bad = [
    'abc',
    '1.5',
    '1e3',
    '0x10',
    'Infinity',
    '-Infinity',
    'NaN',
    '+5',
    '--5',
    '-',
    '9007199254740992',
    '99999999999999999999999',
    '１２',
    '5a',
    '>',
    '>>5',
    '=>5',
    '<>5',
    '==5',
    '" 5"',
    '">5"',
  ];
  check(bad.map((value): Case => [`stars:${value}`, []]));
  check([
    ['stars>', []],
    ['stars=', []],
    ['stars:', []],
  ]);
});

test('booleans: every spelling, any case; anything else or an operator drops the condition', () => {
  const truthy = ['true', 'TRUE', 'True', '1', 'yes', 'YES', 'on', 'On', '"yes"'];
  check(truthy.map((word): Case => [`archived:${word}`, [b('archived', true)]]));
  const falsy = ['false', 'False', '0', 'no', 'NO', 'off', 'OFF', '"off"'];
  check(falsy.map((word): Case => [`archived:${word}`, [b('archived', false)]]));
  const bad = [
    'archived:maybe',
    'archived:2',
    'archived:tru',
    'archived:',
    'archived:>true',
    'archived=true',
    'archived:=1',
    'archived:"yes "',
  ];
  check(bad.map((q): Case => [q, []]));
});

test('dates: both spellings, operators in both forms, calendar and leap years', () => {
  check([
    ['created_at:2024-05-01', [d('created_at', '=', '2024-05-01')]],
    ['created_at:20240501', [d('created_at', '=', '2024-05-01')]],
    ['updated_at>=2024-01-01', [d('updated_at', '>=', '2024-01-01')]],
    ['updated_at:<20240101', [d('updated_at', '<', '2024-01-01')]],
    ['CREATED_AT:>2024-12-31', [d('created_at', '>', '2024-12-31')]],
    ['created_at<=2024-02-29', [d('created_at', '<=', '2024-02-29')]],
    ['created_at=2000-02-29', [d('created_at', '=', '2000-02-29')]],
    ['created_at:0001-01-01', [d('created_at', '=', '0001-01-01')]],
    ['created_at:99991231', [d('created_at', '=', '9999-12-31')]],
  ]);
  const bad = [
    '2023-02-29',
    '1900-02-29',
    '20230229',
    '2024-04-31',
    '2024-13-01',
    '2024-00-10',
    '2024-01-00',
    '0000-01-01',
    '2024-5-1',
    '2024/05/01',
    '2024-0501',
    '202405-01',
    '2024-05-01T00:00',
    '202405011',
    '2024050',
    '２０２４-01-01',
    'yesterday',
    '-2024-01-01',
    '>',
    '2024-01-01x',
  ];
  check(bad.map((value): Case => [`created_at:${value}`, []]));
  check([['created_at>=2023-02-29 stars:1', [n('stars', '=', 1)]]]);
});

test('quoting: exact values with spaces, escapes, unbalanced quotes', () => {
  check([
    ['name:"OWASP Nest"', [s('name', 'OWASP Nest', true)]],
    ['"OWASP Nest"', [s('name', 'OWASP Nest', true)]],
    ['name:"say \\"hi\\""', [s('name', 'say "hi"', true)]],
    ['name:"a\\\\b"', [s('name', 'a\\b', true)]],
    ['name:"a\\\\"', [s('name', 'a\\', true)]],
    ['name:"C:\\path"', [s('name', 'C:\\path', true)]],
    ['name:"a:b stars:>1"', [s('name', 'a:b stars:>1', true)]],
    ['name:"OWASP Nest', [s('name', 'OWASP Nest', true)]],
    ['stars:>5 name:"abc stars:>1', [n('stars', '>', 5), s('name', 'abc stars:>1', true)]],
    ['"unbalanced \\"', [s('name', 'unbalanced "', true)]],
    ['name:"abc\\', [s('name', 'abc\\', true)]],
    ['name:"', []],
    ['name:""', []],
    ['""', []],
    ['"', []],
    ['name:"a"b', [s('name', 'a', true), s('name', 'b')]],
    ['name:a"b c"', [s('name', 'a"b'), s('name', 'c"')]],
    ['name:"tab\there"', [s('name', 'tab here', true)]],
    ['name:" spaced "', [s('name', ' spaced ', true)]],
  ]);
});

test('unknown fields are dropped, never turned into free text; the rest still applies', () => {
  check([
    ['foo:bar', []],
    ['foo:bar stars:5 nest', [n('stars', '=', 5), s('name', 'nest')]],
    [':bar', []],
    ['>5', []],
    ['=x', []],
    ['https://owasp.org', []],
    ['__proto__:x constructor:x toString:1 hasOwnProperty:y', []],
    ['for\u212As:5', []],
    ['nаme:x', []],
  ]);
  check([['forks:5 archived:true name:x', [s('name', 'x')]]], SEARCH_FIELDS.projects);
});

test('free text searches the default field; whitespace of every kind separates', () => {
  check([
    ['nest', [s('name', 'nest')]],
    ['OWASP nest', [s('name', 'OWASP'), s('name', 'nest')]],
    ['  stars:5\t\tname:x\n\r nest  ', [n('stars', '=', 5), s('name', 'x'), s('name', 'nest')]],
    ['a\u00a0b\u3000c\u2028d\ufeffe', ['a', 'b', 'c', 'd', 'e'].map((v) => s('name', v))],
    ['', []],
    ['   ', []],
    ['\t\n\r\v\f', []],
  ]);
});

test('Unicode and control characters never throw and are handled as documented', () => {
  check([
    ['name:日本 🦉 café', [s('name', '日本'), s('name', '🦉'), s('name', 'café')]],
    ['name:"Zürich Chapter"', [s('name', 'Zürich Chapter', true)]],
    ['e\u0301', [s('name', 'e\u0301')]],
    ['\ud800', [s('name', '\ufffd')]],
    ['name:"x\udc00"', [s('name', 'x\ufffd', true)]],
    ['a\u0000b', [s('name', 'a'), s('name', 'b')]],
    ['name:"a\u0000b\u001bc"', [s('name', 'a b c', true)]],
    ['stars:5\u0000archived:yes', [n('stars', '=', 5), b('archived', true)]],
    ['\u0007\u007f\u0085\u009f', []],
    ['zero\u200bwidth', [s('name', 'zero\u200bwidth')]],
  ]);
});

test('the examples in the OpenAPI description parse without dropping a term', () => {
  const examples =
    SEARCH_DESCRIPTION.split('Examples:')[1]
      ?.match(/`[^`]+`/g)
      ?.map((e) => e.slice(1, -1)) ?? [];
  assert.deepEqual(
    examples.map((q) => parseSearch(q, SEARCH_FIELDS.repositories).length),
    [2, 1, 2, 2, 1],
    examples.join(' · '),
  );
  for (const resource of Object.keys(SEARCH_EXAMPLES) as (keyof typeof SEARCH_EXAMPLES)[]) {
    const shown = searchDescription(resource).split('Examples:')[1]?.split('Fields:')[0] ?? '';
    for (const q of SEARCH_EXAMPLES[resource]) {
      assert.ok(shown.includes(`\`${q}\``), `${resource}: ${q}`);
      assert.equal(
        parseSearch(q, SEARCH_FIELDS[resource]).length,
        q.replace(/"[^"]*"/g, 'x').split(' ').length,
        `${resource}: ${q}`,
      );
    }
  }
});

test('a repeated condition is kept once, in the place it first appears', () => {
  check([
    ['nest nest name:nest', [s('name', 'nest')]],
    [
      'stars:>1 nest stars>1 stars:>=1 NEST',
      [n('stars', '>', 1), s('name', 'nest'), n('stars', '>=', 1), s('name', 'NEST')],
    ],
    ['name:"a" name:a name:"a"', [s('name', 'a', true), s('name', 'a')]],
    ['archived:yes archived:on archived:1', [b('archived', true)]],
    ['created_at:2024-05-01 created_at:20240501', [d('created_at', '=', '2024-05-01')]],
    [`${'e '.repeat(499)}e`, [s('name', 'e')]],
  ]);
});
