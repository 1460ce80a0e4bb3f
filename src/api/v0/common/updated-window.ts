// `updated_after` / `updated_before` (issue 17, docs/incremental.md): a time window on the column a list's
// records change by, so that a consumer reads only what changed since its last run. The window is
// half-open, [after, before): consecutive windows tile time without a gap or an overlap, and a consumer
// that passes the greatest `updated_at` it has seen reads that record again rather than missing another
// one with the same time.
import { Type } from '@sinclair/typebox';
import { sql, type RawBuilder } from 'kysely';
import { InvalidRequestError, type ParamError } from '../../../errors.ts';

/** A list's time window: parameters `<name>_after` and `<name>_before` on the SQL column `column`. */
export interface ChangeWindow {
  name: string;
  column: string;
}

// RFC 3339 (ISO 8601 with a zone, as the schema's `date-time`): date, `T`, seconds, fraction to the microsecond.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|([+-])(\d{2}):?(\d{2}))$/i;

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The instant as text PostgreSQL reads exactly (`…+hh:mm`), and its milliseconds; undefined when not one. */
export function parseInstant(value: string): { text: string; ms: number } | undefined {
  const m = INSTANT.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second, fraction = '', , sign, offsetHour, offsetMinute] = m.slice(1);
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > DAYS[mo - 1]! || (mo === 2 && d === 29 && !leap)) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  // Real zones lie within −12:00 and +14:00.
  if (sign && (Number(offsetHour) > 14 || Number(offsetMinute) > 59)) return undefined;
  const zone = sign ? `${sign}${offsetHour}:${offsetMinute}` : '+00:00';
  const text = `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}${zone}`;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(Number(hour), Number(minute), Number(second), Number(fraction.padEnd(3, '0').slice(0, 3)));
  const offset = sign ? (sign === '-' ? -1 : 1) * (Number(offsetHour) * 60 + Number(offsetMinute)) * 60_000 : 0;
  return { text, ms: date.getTime() - offset };
}

/** The two parameters, for the list's querystring schema (validated again by `changeFilter`). */
export function changeParams({ name }: ChangeWindow) {
  const param = (bound: string) =>
    Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 40,
        description:
          `Only records whose \`${name}_at\` is ${bound}: an ISO 8601 date-time with a zone (\`Z\` or \`+hh:mm\`), ` +
          `e.g. \`2024-05-01T12:00:00Z\`. \`${name}_after\` is inclusive, \`${name}_before\` exclusive. ` +
          'See docs/incremental.md for walking the changes since a previous run with `cursor`.',
      }),
    );
  return {
    [`${name}_after`]: param('at or after this instant'),
    [`${name}_before`]: param('before this instant'),
  };
}

/**
 * The condition of the window given in the query, if any. A value that is not an instant with a zone,
 * or `after` later than `before`, is a 400; equal bounds are an empty window.
 */
export function changeFilter(window: ChangeWindow, query: Record<string, unknown>): RawBuilder<boolean> | undefined {
  const errors: ParamError[] = [];
  const read = (param: string) => {
    const raw = query[param];
    if (raw === undefined) return undefined;
    const parsed = typeof raw === 'string' ? parseInstant(raw) : undefined;
    if (!parsed)
      errors.push({
        loc: ['query', param],
        msg: 'must be an ISO 8601 date-time with a time zone, e.g. 2024-05-01T12:00:00Z',
      });
    return parsed;
  };
  const after = read(`${window.name}_after`);
  const before = read(`${window.name}_before`);
  if (errors.length === 0 && after && before && after.ms > before.ms) {
    errors.push({ loc: ['query', `${window.name}_after`], msg: `must not be later than ${window.name}_before` });
  }
  if (errors.length > 0) throw new InvalidRequestError(errors);
  if (!after && !before) return undefined;
  const column = sql.ref(window.column);
  const terms = [
    ...(after ? [sql<boolean>`${column} >= ${after.text}::timestamptz`] : []),
    ...(before ? [sql<boolean>`${column} < ${before.text}::timestamptz`] : []),
  ];
  return terms.length > 0 ? sql<boolean>`${sql.join(terms, sql` and `)}` : undefined;
}
