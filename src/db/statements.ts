// Two readings of statements that both the lists (api/v0/common/) and the dumps' batches (dumps/) make: the tables
// a statement reads, and a record's fields rendered by the database as the serializer writes them.
import { sql, type RawBuilder } from 'kysely';
import type { TObject, TSchema } from '@sinclair/typebox';
import { memoize } from '../memo.ts';

/**
 * The tables a statement reads: every name after FROM or JOIN, quoted or not. Remembered for recent texts: a list
 * sends the same text with other values (read per request).
 */
export const tablesOf = memoize(1_000, (text): string[] => [
  ...new Set([...text.matchAll(/\b(?:from|join)\s+"?([a-z_][a-z0-9_]*)"?/gi)].map((m) => m[1]!.toLowerCase())),
]);

/**
 * The fields of a list item as the database renders them: each property of the item schema, in
 * schema order, with timestamps written the way the serializer writes a Date (milliseconds, `Z`).
 */
export function itemColumns(item: TObject): RawBuilder<unknown>[] {
  return Object.entries(item.properties).map(([name, schema]) => {
    const column = sql.ref(`t.${name}`);
    return isDateTime(schema)
      ? sql`to_char(${column} at time zone 'UTC', ${sql.lit(ISO_MILLIS)}) as ${sql.id(name)}`
      : sql`${column}`;
  });
}

const ISO_MILLIS = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';
const ISO_MICROS = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

/**
 * Stored fields as a dump's `extra` carries them (dumps/dump-source.ts): each property of `fields`, read from the
 * column `t.<prefix><name>`, timestamps to the microsecond (what an ordering compares, not what a detail shows), an
 * array (a jsonb array of strings) written compactly as the serializer writes one (jsonb's text has blanks).
 */
export function storedColumns(fields: TObject, prefix: string): RawBuilder<unknown>[] {
  return Object.entries(fields.properties).map(([name, schema]) => {
    const column = sql.ref(`t.${prefix}${name}`);
    if (isDateTime(schema))
      return sql`to_char(${column} at time zone 'UTC', ${sql.lit(ISO_MICROS)}) as ${sql.id(name)}`;
    if (schema.type === 'array')
      return sql`array_to_json(ARRAY(SELECT jsonb_array_elements_text(${column}))) as ${sql.id(name)}`;
    return sql`${column} as ${sql.id(name)}`;
  });
}

function isDateTime(schema: TSchema): boolean {
  if (schema.format === 'date-time') return true;
  return Array.isArray(schema.anyOf) && (schema.anyOf as TSchema[]).some(isDateTime);
}
