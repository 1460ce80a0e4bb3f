// Structured search `q`: a hand-written scanner turns the text into terms (field, operator, value),
// then each term becomes one typed condition or is dropped on its own. Never throws; the grammar
// and every decision are in docs/search.md.
import type { Condition, FieldSpec, Operator } from './filter.fields.ts';
import { asciiLower, parseBoolean, parseDate, parseInteger } from './filter.values.ts';

export { MAX_QUERY_LENGTH, SEARCH_FIELDS } from './filter.fields.ts';
export type { Condition, FieldSpec, FieldType, Operator } from './filter.fields.ts';

interface Term {
  /** Undefined for free text. Raw spelling: may be empty or unknown. */
  field: string | undefined;
  op: Operator | undefined;
  value: string;
  quoted: boolean;
}

// Control characters count as whitespace: U+0000 cannot reach PostgreSQL text at all, and none of
// them belongs in a name anyone searches for.
const SEPARATOR = /^[\s\p{Cc}]$/u;
const CONTROL = /^\p{Cc}$/u;
const isSeparator = (ch: string) => SEPARATOR.test(ch);
const isFieldEnd = (ch: string | undefined) => ch === ':' || ch === '<' || ch === '>' || ch === '=';

/** Code points, with lone surrogates replaced by U+FFFD as the UTF-8 encoder would anyway. */
function codePoints(text: string): string[] {
  return Array.from(text, (ch) => {
    const code = ch.charCodeAt(0);
    return ch.length === 1 && code >= 0xd800 && code <= 0xdfff ? '\uFFFD' : ch;
  });
}

function readOperator(chars: string[], at: number): [Operator | undefined, number] {
  const first = chars[at];
  if ((first === '>' || first === '<') && chars[at + 1] === '=') return [`${first}=`, at + 2];
  if (first === '>' || first === '<' || first === '=') return [first, at + 1];
  return [undefined, at];
}

/** `at` is on the opening quote. An unbalanced quote runs to the end of the input. */
function readQuoted(chars: string[], at: number): [string, number] {
  let value = '';
  let i = at + 1;
  while (i < chars.length) {
    const ch = chars[i] as string;
    if (ch === '"') return [value, i + 1];
    const next = chars[i + 1];
    if (ch === '\\' && (next === '"' || next === '\\')) {
      value += next;
      i += 2;
      continue;
    }
    // Inside quotes whitespace is part of the value; a control character stands for a plain space.
    value += CONTROL.test(ch) ? ' ' : ch;
    i += 1;
  }
  return [value, i];
}

function readTerm(chars: string[], start: number): [Term, number] {
  let end = start;
  while (end < chars.length && !isSeparator(chars[end] as string) && chars[end] !== '"' && !isFieldEnd(chars[end]))
    end++;
  let field: string | undefined;
  let op: Operator | undefined;
  let i = start;
  if (isFieldEnd(chars[end])) {
    field = chars.slice(start, end).join('');
    i = chars[end] === ':' ? end + 1 : end;
    [op, i] = readOperator(chars, i);
  }
  if (chars[i] === '"') {
    const [value, next] = readQuoted(chars, i);
    return [{ field, op, value, quoted: true }, next];
  }
  let valueEnd = i;
  while (valueEnd < chars.length && !isSeparator(chars[valueEnd] as string)) valueEnd++;
  return [{ field, op, value: chars.slice(i, valueEnd).join(''), quoted: false }, valueEnd];
}

function tokenize(q: string): Term[] {
  const chars = codePoints(q);
  const terms: Term[] = [];
  let i = 0;
  while (i < chars.length) {
    if (isSeparator(chars[i] as string)) {
      i++;
      continue;
    }
    const [term, next] = readTerm(chars, i);
    terms.push(term);
    i = next;
  }
  return terms;
}

function resolveField<F extends string>(spec: FieldSpec<F>, raw: string | undefined): F | undefined {
  if (raw === undefined) return spec.defaultField;
  const name = asciiLower(raw);
  return Object.hasOwn(spec.fields, name) ? (name as F) : undefined;
}

function toCondition<F extends string>(term: Term, spec: FieldSpec<F>): Condition<F> | undefined {
  const field = resolveField(spec, term.field);
  if (field === undefined || term.value === '') return undefined;
  const { value, op } = term;
  switch (spec.fields[field]) {
    case 'string':
      return op ? undefined : { kind: 'string', field, value, exact: term.quoted };
    case 'boolean': {
      const parsed = op ? undefined : parseBoolean(value);
      return parsed === undefined ? undefined : { kind: 'boolean', field, value: parsed };
    }
    case 'number': {
      const parsed = parseInteger(value);
      return parsed === undefined ? undefined : { kind: 'number', field, op: op ?? '=', value: parsed };
    }
    case 'date': {
      const from = parseDate(value);
      return from === undefined ? undefined : { kind: 'date', field, op: op ?? '=', from };
    }
  }
}

/**
 * The conditions of `q`, ANDed by the caller; anything unusable is dropped, never thrown. A repeated
 * condition is kept once: AND makes it redundant, and 500 copies of `e` would cost 500 scans of each row.
 */
export function parseSearch<F extends string>(q: string, spec: FieldSpec<F>): Condition<F>[] {
  const conditions = new Map<string, Condition<F>>();
  for (const term of tokenize(q)) {
    const condition = toCondition(term, spec);
    if (condition) conditions.set(JSON.stringify(condition), condition);
  }
  return [...conditions.values()];
}
