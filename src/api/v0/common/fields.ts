// `fields=a,b,…` on every list and detail (issue 27): only those fields of each item, in the schema's order. Small
// answers for agents and bots, and for anyone who needs two columns of a large list. An unknown name is a 400 that
// lists the known ones; a name given twice counts once. The response cache keys on the query string, `fields` in it.
import { Type } from '@sinclair/typebox';
import { invalidParam } from '../../../errors.ts';

/** Longer than every list of known names: a longer value cannot be a valid selection. */
const MAX_LENGTH = 1000;

export function fieldsParam(names: readonly string[]) {
  return Type.Optional(
    Type.String({
      maxLength: MAX_LENGTH,
      description:
        `Only these fields of each record, comma-separated (\`${names.slice(0, 2).join(',')}\`), in the order of the ` +
        `schema: ${names.map((n) => `\`${n}\``).join(', ')}. An unknown name is a 400. Default: every field.`,
      examples: [names.slice(0, 2).join(',')],
    }),
  );
}

/** The selected names in the order of `known`, or undefined when `fields` is absent. */
export function readFields(value: string | undefined, known: readonly string[]): string[] | undefined {
  if (value === undefined) return undefined;
  const asked = new Set(
    value
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  );
  const unknown = [...asked].filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 3).map((name) => JSON.stringify(name.slice(0, 40)));
    throw invalidParam(
      'query',
      'fields',
      `unknown field${unknown.length > 1 ? 's' : ''} ${shown.join(', ')}${unknown.length > 3 ? ', …' : ''}; ` +
        `known: ${known.join(', ')}`,
    );
  }
  if (asked.size === 0) throw invalidParam('query', 'fields', `must name at least one of: ${known.join(', ')}`);
  return known.filter((name) => asked.has(name));
}

/** The record with only the selected fields, in their order. */
export function pickFields(record: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const name of fields) if (Object.hasOwn(record, name)) picked[name] = record[name];
  return picked;
}
