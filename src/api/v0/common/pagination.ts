// Page/limit pagination with the envelope of the contract and an RFC 8288 Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../../../db/index.ts';
import { invalidParam } from '../../../errors.ts';
import { termSql, type OrderTerm } from './ordering.ts';
import type { Page, PageInfo } from './page.ts';
import { after, BoundaryCache, decodeCursor, encodeCursor, STEP, type Key } from './keyset.ts';
import type { CountCache } from './counts.ts';
import { tablesOf } from '../../../db/statements.ts';
import { coordinateColumns, featureJson, located, type GeoColumns } from './geojson.ts';
import {
  idOf,
  instantiate,
  keyStandIn,
  LIMIT_STAND_IN,
  nullsOf,
  orderShape,
  SKIP_STAND_IN,
  StatementCache,
} from './page-statements.ts';
import { linkBase } from '../../../http/link-base.ts';

export const MAX_LIMIT = 100;

/**
 * The rows of a list, as a query function returns them: a query builder with the filters applied that
 * selects exactly the item's fields, unordered and unpaged. listRoute alone orders, pages, counts, seeks
 * and renders it (fetchPage).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ListQuery = SelectQueryBuilder<any, any, any>;

export interface PageQuery {
  page?: number;
  cursor?: string;
  limit?: number;
  page_size?: number;
}

/** A page of a list route: with the route's totals and the fields of its items (set by listRoute). */
export interface ListPage extends Page {
  /** Totals already counted for this data version, by count query. */
  counts: CountCache;
  /** The item's fields as the database renders them (itemColumns). */
  columns: RawBuilder<unknown>[];
  /** Keys every STEP rows, by count query and ordering, for this data version (set by listRoute). */
  boundaries?: BoundaryCache;
  /** GeoJSON: only records with coordinates, each rendered as a Feature (geojson.ts; set by listRoute). */
  geo?: GeoColumns;
}

/** One page of a list: its items already as JSON text (`{…},{…}`, no brackets), and the total. */
export interface PageResult {
  items: string;
  count: number;
  /** The cursor of the page after this one (its last row's key), when the page is full. */
  next?: string;
  /** Whether a page follows, when read through a cursor (the count cannot tell where the cursor is). */
  hasNext?: boolean;
  /** The records of this page. */
  returned: number;
}

export function pageOf(query: PageQuery): Page {
  if (query.limit !== undefined && query.page_size !== undefined && query.limit !== query.page_size) {
    throw invalidParam('query', 'page_size', 'is an alias of limit; give one of them or equal values');
  }
  return {
    page: query.page ?? 1,
    limit: query.limit ?? query.page_size ?? MAX_LIMIT,
    ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
  };
}

/**
 * Runs a filtered query for one page and, beside it, the count of all matching records. Two cheap
 * queries beat one with a window count: the page can stop after `limit` rows read in index order,
 * where `count(*) over ()` would make every page read and sort every matching row. The total of
 * a filter set is counted once until a table it reads changes (counts.ts): the other pages reuse it.
 * A deep page starts after a remembered boundary, a page given a cursor after its key (keyset.ts).
 *
 * The page comes back as JSON text built by the database (row_to_json over the ordered page, the
 * way PostgREST does it): parsing a hundred rows into objects and serializing them again took
 * most of the CPU time of an uncached list in this single-threaded process (docs/decisions.md).
 */
export async function fetchPage(
  db: Db,
  listed: ListQuery,
  order: OrderTerm[],
  { page, limit, cursor, counts, columns, boundaries, geo }: ListPage,
): Promise<PageResult> {
  const query = geo ? located(listed, geo) : listed;
  // The filtered rows' text and values: with what the page adds around them, the shape of its statements, which are
  // compiled once per shape (page-statements.ts).
  const filtered = query.compile();
  const values = filtered.parameters;
  const ordered = orderShape(order);
  const shape =
    ordered === undefined
      ? undefined
      : `${filtered.sql}\u0000${ordered}\u0000${columns.map(idOf).join(',')}\u0000${geo ? idOf(geo) : 0}`;
  const countQuery = () => query.clearSelect().select(sql<string>`count(*)`.as('n'));
  const countTemplate = statements.get(`count\u0000${filtered.sql}`, values, () => countQuery().compile());
  const compiled = countTemplate ? instantiate(countTemplate, values, {}) : countQuery().compile();
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  const tables = tablesOf(compiled.sql);
  const total = counts.total(key, tables, () =>
    db.executeQuery(compiled).then((result) => Number((result.rows[0] as { n: string }).n)),
  );
  // Awaited below, after the boundaries: handled now so that a failure meanwhile is not an unhandled rejection.
  total.catch(() => undefined);

  // Where the page starts: after the cursor's key; or after the nearest remembered boundary, then a
  // short OFFSET (under STEP rows); or, for the first pages, a plain OFFSET.
  let startKey: Key | undefined;
  let skip = (page - 1) * limit;
  if (cursor !== undefined) {
    startKey = decodeCursor(order, cursor, key);
    skip = 0;
  } else if (boundaries && skip >= STEP) {
    const signature = order.map((t) => `${t.column} ${t.direction}`).join(',');
    const keys = await boundaries.get(`${key}\u0000${signature}`, tables, () => boundaryKeys(db, query, order));
    const passed = Math.min(Math.floor(skip / STEP), keys.length);
    if (passed > 0) {
      startKey = keys[passed - 1]!;
      skip -= passed * STEP;
    }
  }
  // A page whose statement would have no other value than its limit and offset (no filter value, no key to start
  // after) has them written in as literals, a statement of no parameter: PostgreSQL keeps its one plan. With `LIMIT $1`
  // its plan cache never keeps the generic plan (costed for a tenth of the rows, ten times a custom plan's cost) and
  // plans the statement again at every execution, named or not: about a third of the issues page's database CPU
  // (docs/decisions.md, rest-lists). Pages with values keep them as parameters (custom plans, as before): a generic
  // plan there could be kept for values it does not suit. The offset is under STEP on such pages (boundaries, or the
  // first pages), which bounds the texts to the limits and offsets of the first pages.
  const literal = values.length === 0 && startKey === undefined && skip < STEP && !order[0]!.indexOrdered;
  const statement = (limit: number, skip: number, key: Key | undefined) =>
    pageStatement(
      db,
      key === undefined ? query : query.where(after(order, key)),
      order,
      columns,
      geo,
      limit,
      skip,
      literal,
    );
  const template =
    shape === undefined
      ? undefined
      : literal
        ? statements.get(`page\u0000${shape}\u0000\u0000${limit},${skip}`, values, () =>
            statement(limit, skip, undefined).compile(db),
          )
        : statements.get(`page\u0000${shape}\u0000${startKey ? nullsOf(startKey) : ''}`, values, () =>
            statement(LIMIT_STAND_IN, SKIP_STAND_IN, startKey && keyStandIn(startKey)).compile(db),
          );
  const rendered = template
    ? instantiate(template, values, { limit, skip, ...(startKey ? { key: startKey } : {}) })
    : statement(limit, skip, startKey).compile(db);
  const [result, count] = await Promise.all([
    db.executeQuery<{ items: string | null; rows: string; last: string | null }>(rendered).catch((error: unknown) => {
      // A cursor holds values of the ordering's types: one edited to hold another type is the client's error.
      if (cursor !== undefined && /^22/.test(String((error as { code?: unknown }).code)))
        throw decodeCursor(order, '!', key);
      throw error;
    }),
    total,
  ]);
  const row = result.rows[0];
  const full = Number(row?.rows ?? 0) === limit;
  const next = full && row?.last ? encodeCursor(order, JSON.parse(row.last) as Key, key) : undefined;
  return {
    items: row?.items ?? '',
    count,
    returned: Number(row?.rows ?? 0),
    ...(next ? { next } : {}),
    ...(cursor !== undefined ? { hasNext: full } : {}),
  };
}

/** The statements of list pages by shape, all lists together (page-statements.ts). */
const statements = new StatementCache();

/**
 * One page of `start` (the filtered rows, after a key or not) as one row: its items rendered as JSON text by the
 * database, how many, and the key of the last.
 */
function pageStatement(
  db: Db,
  start: ListQuery,
  order: OrderTerm[],
  columns: RawBuilder<unknown>[],
  geo: GeoColumns | undefined,
  limit: number,
  skip: number,
  literal: boolean,
) {
  const orderBy = (q: ListQuery): ListQuery => {
    let ordered = q;
    for (const term of order) ordered = ordered.orderBy(termSql(term), term.direction);
    return ordered;
  };
  const selected = (q: ListQuery) =>
    q
      .select(order.map((term, i) => sql`${termSql(term)}`.as(`__k${i}`)) as never)
      .select((geo ? coordinateColumns(geo) : []) as never);
  const first = order[0]!;
  // Nearest first: the planner will not read a GiST distance order and sort each run of equal distances by the
  // tie-breaker (it sorts the whole table instead); read the page's rows in the index's order, ties with the last
  // one included (FETCH … WITH TIES), then sort those few by every term (docs/decisions.md, agents).
  const nearest = (): ListQuery => {
    const read = selected(start.orderBy(termSql(first), first.direction)).fetch(skip + limit, 'with ties');
    let sorted = db.selectFrom(read.as('n')).selectAll() as unknown as ListQuery;
    for (const [i, term] of order.entries()) sorted = sorted.orderBy(sql.ref(`n.__k${i}`), term.direction);
    return sorted.limit(limit).offset(skip);
  };
  // Literals (fetchPage: a statement of no parameter) or parameters.
  const bound = (n: number) => (literal ? sql.lit(n) : n);
  const keyed = first.indexOrdered ? nearest() : selected(orderBy(start)).limit(bound(limit)).offset(bound(skip));
  // The last row's key: each term's values gathered as they are and the last of each rendered once (a JSON array
  // rendered for every row of the page, to keep one, cost the database about a seventh of an issues page).
  const lastOf = sql.join(order.map((_, i) => sql`(array_agg(${sql.ref(`t.__k${i}`)}))[count(*)]`));
  // string_agg and array_agg read the rows in the order of the page: a nested loop over the ordered subquery.
  return sql<{ items: string | null; rows: string; last: string | null }>`
    select string_agg(${geo ? featureJson(sql`row_to_json(j)`, geo.id !== undefined) : sql`row_to_json(j)`}::text, ',') as items, count(*) as rows,
           case when count(*) > 0 then json_build_array(${lastOf})::text end as last
    from (${keyed}) as t cross join lateral (select ${sql.join(columns)}) as j`;
}

/** The key of every STEP-th row of the list in this ordering: one pass, in index order where an index serves it. */
async function boundaryKeys(db: Db, query: ListQuery, order: OrderTerm[]): Promise<Key[]> {
  const orderSql = sql.join(order.map((t) => sql`${termSql(t)} ${sql.raw(t.direction)}`));
  const numbered = query
    .clearSelect()
    .select([
      ...order.map((term, i) => sql`${termSql(term)}`.as(`__k${i}`)),
      sql`row_number() over (order by ${orderSql})`.as('__n'),
    ] as never);
  const keyOf = sql.join(order.map((_, i) => sql.ref(`s.__k${i}`)));
  const { rows } = await sql<{ k: string }>`
    select json_build_array(${keyOf})::text as k from (${numbered}) as s where s.__n % ${STEP} = 0 order by s.__n`.execute(
    db,
  );
  return rows.map((r) => JSON.parse(r.k) as Key);
}

export function pageInfo(count: number, { page, limit }: Page, hasNext?: boolean): PageInfo {
  const totalPages = Math.max(1, Math.ceil(count / limit));
  return { count, total_pages: totalPages, has_next: hasNext ?? page < totalPages, has_previous: page > 1 };
}

/** The contract's envelope around items already rendered as JSON, in the order of ListBody. */
export function envelopeJson(items: string, info: PageInfo, { page }: Page): string {
  return (
    `{"items":[${items}],"count":${info.count},"total_count":${info.count},"current_page":${page},` +
    `"total_pages":${info.total_pages},"has_next":${info.has_next},"has_previous":${info.has_previous}}`
  );
}

/** `next` carries the cursor of the page after this one (keyset.ts) beside its page number. */
export function setLinkHeader(
  request: FastifyRequest,
  reply: FastifyReply,
  body: PageInfo,
  page: Page,
  next?: string,
): void {
  const [path, search = ''] = request.url.split('?') as [string, string?];
  const base = linkBase(request);
  // One set of parameters for all the links: each sets its page (in place, or appended after limit) and its cursor
  // (appended last, or none).
  const params = new URLSearchParams(search);
  params.delete('page_size');
  params.delete('cursor');
  params.set('limit', String(page.limit));
  const link = (target: number, rel: string, cursor?: string) => {
    params.set('page', String(target));
    if (cursor) params.set('cursor', cursor);
    else params.delete('cursor');
    return `<${base}${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (body.has_previous) links.push(link(Math.min(page.page - 1, body.total_pages), 'prev'));
  if (body.has_next) links.push(link(page.page + 1, 'next', next));
  links.push(link(body.total_pages, 'last'));
  reply.header('link', links.join(', '));
}
