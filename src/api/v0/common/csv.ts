// CSV answers of the lists (issue 28, item 3): `Accept: text/csv` or `format=csv`. RFC 4180 in UTF-8: a header row of
// the item's fields in schema order (or those of `fields`), one record per row, CRLF line ends. The page's items are
// the JSON the database rendered for the JSON list (fetchPage), read back here, so that each cell holds exactly the
// JSON item's value: text in double quotes, numbers and booleans bare, null an empty unquoted cell (so `""` is the
// empty text, as PostgreSQL's own CSV writes it), arrays and objects (leaders) as their JSON text.
// Spreadsheets run a cell that starts with = (or + - @) as a formula (CSV injection), also behind leading whitespace
// (tab and CR among it) or invisible characters they skip, and in the full-width forms ＝ ＋ － ＠ they read as the
// ASCII ones: such a text gets an apostrophe in front, as OWASP's CSV Injection page advises, but only where the
// formula could act (issue 45; docs/decisions.md, formats): after =, anything; after + - @, only a text that calls a
// function `(`, reaches another program `|` (DDE) or another sheet or file `!` `[`. `-js`, `+1`, `@owasp` stay as
// they are: a spreadsheet reads them as an error or a number, and nothing runs.
import type { Groups } from './groups.ts';

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';

// A text that starts as a formula that acts, after any apostrophes: the apostrophes too get one more, so that a
// reader can always take one off (`'=x` is written `''=x`) and a text that starts with an apostrophe otherwise
// (`'t Hooft`) is left as it is. Before = + - @ (ASCII or full-width) may come any run of whitespace (tab, CR, line
// feed, space, no-break space, ideographic space...) and of the zero-width characters U+200B-U+200D, U+2060, U+FEFF
// and U+180E; = then needs one character more, + - @ one of ( | ! [ (ASCII or full-width) anywhere after them. Text
// that only starts with those (` hello`, `\thello`) is left as it is. Linear: anchored, one unbounded run per branch.
export const FORMULA =
  /^'*[\p{White_Space}\u180E\u200B-\u200D\u2060\uFEFF]*(?:[=\uFF1D].|[+\-@\uFF0B\uFF0D\uFF20].*[(|![\uFF08\uFF5C\uFF01\uFF3B])/su;

/** One cell: text quoted (and guarded), numbers and booleans as JSON writes them, null empty. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const guarded = FORMULA.test(text) ? `'${text}` : text;
  return `"${guarded.replace(/"/g, '""')}"`;
}

function row(cells: string[]): string {
  return `${cells.join(',')}\r\n`;
}

/** The CSV of a page: `names` the columns, `items` the page as fetchPage renders it (`{…},{…}`). */
export function csvOfItems(names: readonly string[], items: string): string {
  const records = JSON.parse(`[${items}]`) as Record<string, unknown>[];
  let text = row([...names]);
  for (const record of records) text += row(names.map((name) => csvCell(record[name])));
  return text;
}

/** `group_by` as CSV: a column of the field's values (named after it) and one of their counts. */
export function csvOfGroups(field: string, { groups }: Groups): string {
  const counted = JSON.parse(groups) as { value: unknown; count: number }[];
  let text = row([field, 'count']);
  for (const { value, count } of counted) text += row([csvCell(value), String(count)]);
  return text;
}
