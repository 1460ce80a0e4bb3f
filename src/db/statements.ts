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
export const ISO_MICROS = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

/**
 * Stored fields as a dump's `extra` carries them (dumps/dump-source.ts): each property of `fields`, read from the
 * column `t.<prefix><name>`, timestamps to the microsecond (what an ordering compares, not what a detail shows), an
 * array (a jsonb array of strings) written compactly as the serializer writes one (jsonb's text has blanks); those
 * named in `json` are compact JSON already (of type json) and written as they are.
 */
export function storedColumns(
  fields: TObject,
  prefix: string,
  json: ReadonlySet<string> = new Set(),
): RawBuilder<unknown>[] {
  return Object.entries(fields.properties).map(([name, schema]) => {
    const column = sql.ref(`t.${prefix}${name}`);
    if (json.has(name)) return sql`${column} as ${sql.id(name)}`;
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

/**
 * A jsonb value as compact JSON text (no blanks, as JSON.stringify writes it; jsonb's own text has them), for a dump's
 * `extra` field holding an object: nested up to `depth` levels of objects and arrays, below which jsonb's text is kept.
 */
export function compactJson(value: RawBuilder<unknown>, depth: number): RawBuilder<string> {
  if (depth === 0) return sql<string>`${value}::text`;
  const k = sql.raw(`k${depth}`);
  const a = sql.raw(`a${depth}`);
  return sql<string>`CASE jsonb_typeof(${value})
    WHEN 'object' THEN (SELECT '{' || coalesce(string_agg(to_json(${k}.key)::text || ':' ||
      ${compactJson(sql`${k}.value`, depth - 1)}, ',' ORDER BY ${k}.n), '') || '}'
      FROM jsonb_each(${value}) WITH ORDINALITY AS ${k}(key, value, n))
    WHEN 'array' THEN (SELECT '[' || coalesce(string_agg(${compactJson(sql`${a}.value`, depth - 1)}, ',' ORDER BY ${a}.n),
      '') || ']' FROM jsonb_array_elements(${value}) WITH ORDINALITY AS ${a}(value, n))
    ELSE ${value}::text END`;
}
