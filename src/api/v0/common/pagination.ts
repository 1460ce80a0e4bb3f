// Page/limit pagination with the envelope of the contract and an RFC 8288 Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { TObject, TSchema } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { invalidParam } from '../../../errors.ts';
import type { OrderTerm } from './ordering.ts';

export const MAX_LIMIT = 100;

export interface PageQuery {
  page?: number;
  limit?: number;
  page_size?: number;
}

export interface Page {
  page: number;
  limit: number;
}

/** A page of a list route: with the route's totals and the fields of its items (set by listRoute). */
export interface ListPage extends Page {
  /** Totals already counted for this data version, by count query. */
  counts: CountCache;
  /** The item's fields as the database renders them (itemColumns). */
  columns: RawBuilder<unknown>[];
}

/** One page of a list: its items already as JSON text (`{…},{…}`, no brackets), and the total. */
export interface PageResult {
  items: string;
  count: number;
}

/**
 * The fields of a list item as the database renders them: each property of the item schema, in
 * schema order, with timestamps written the way the serializer writes a Date (milliseconds, `Z`).
 */
export function itemColumns(item: TObject): RawBuilder<unknown>[] {
  return Object.entries(item.properties).map(([name, schema]) => {
    const column = sql.ref(`t.${name}`);
    return isDateTime(schema) ? sql`to_char(${column} at time zone 'UTC', ${sql.lit(ISO_MILLIS)}) as ${sql.id(name)}` : sql`${column}`;
  });
}

const ISO_MILLIS = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';

function isDateTime(schema: TSchema): boolean {
  if (schema.format === 'date-time') return true;
  return Array.isArray(schema.anyOf) && (schema.anyOf as TSchema[]).some(isDateTime);
}

/** Totals by compiled count query; emptied whenever the data version changes. */
export class CountCache {
  private totals = new Map<string, number>();

  get(key: string): number | undefined {
    return this.totals.get(key);
  }

  set(key: string, total: number): void {
    if (this.totals.size >= 10_000) this.totals.clear();
    this.totals.set(key, total);
  }

  clear(): void {
    this.totals.clear();
  }
}

export function pageOf(query: PageQuery): Page {
  if (query.limit !== undefined && query.page_size !== undefined && query.limit !== query.page_size) {
    throw invalidParam('query', 'page_size', 'is an alias of limit; give one of them or equal values');
  }
  return { page: query.page ?? 1, limit: query.limit ?? query.page_size ?? MAX_LIMIT };
}

/**
 * Runs a filtered query for one page and, beside it, the count of all matching records. Two cheap
 * queries beat one with a window count: the page can stop after `limit` rows read in index order,
 * where `count(*) over ()` would make every page read and sort every matching row. The total of
 * a filter set is counted once per data version: the other pages of a listing reuse it.
 *
 * The page comes back as JSON text built by the database (row_to_json over the ordered page, the
 * way PostgREST does it): parsing a hundred rows into objects and serializing them again took
 * most of the CPU time of an uncached list in this single-threaded process (docs/decisions.md).
 */
export async function fetchPage<DB, TB extends keyof DB, O>(
  db: Db,
  query: SelectQueryBuilder<DB, TB, O>,
  order: OrderTerm[],
  { page, limit, counts, columns }: ListPage,
): Promise<PageResult> {
  let ordered = query;
  for (const term of order) ordered = ordered.orderBy(sql.ref(term.column), term.direction);
  const countQuery = query.clearSelect().select(sql<string>`count(*)`.as('n'));
  const compiled = countQuery.compile();
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  const known = counts.get(key);
  const pageQuery = ordered.limit(limit).offset((page - 1) * limit);
  // string_agg keeps the order of the subquery's rows: it reads them from a plain subquery scan.
  const rendered = sql<{ items: string | null }>`
    select string_agg(row_to_json(j)::text, ',') as items
    from (select ${sql.join(columns)} from (${pageQuery}) as t) as j`;
  const [result, total] = await Promise.all([
    rendered.execute(db),
    known ?? countQuery.executeTakeFirstOrThrow().then((row) => Number((row as { n: string }).n)),
  ]);
  if (known === undefined) counts.set(key, total);
  return { items: result.rows[0]?.items ?? '', count: total };
}

export interface PageInfo {
  count: number;
  total_pages: number;
  has_next: boolean;
  has_previous: boolean;
}

export function pageInfo(count: number, { page, limit }: Page): PageInfo {
  const totalPages = Math.max(1, Math.ceil(count / limit));
  return { count, total_pages: totalPages, has_next: page < totalPages, has_previous: page > 1 };
}

/** The contract's envelope around items already rendered as JSON, in the order of ListBody. */
export function envelopeJson(items: string, info: PageInfo, { page }: Page): string {
  return (
    `{"items":[${items}],"count":${info.count},"total_count":${info.count},"current_page":${page},` +
    `"total_pages":${info.total_pages},"has_next":${info.has_next},"has_previous":${info.has_previous}}`
  );
}

export function setLinkHeader(request: FastifyRequest, reply: FastifyReply, body: PageInfo, page: Page): void {
  const [path, search = ''] = request.url.split('?') as [string, string?];
  const link = (target: number, rel: string) => {
    const params = new URLSearchParams(search);
    params.delete('page_size');
    params.set('limit', String(page.limit));
    params.set('page', String(target));
    return `<${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (body.has_previous) links.push(link(Math.min(page.page - 1, body.total_pages), 'prev'));
  if (body.has_next) links.push(link(page.page + 1, 'next'));
  links.push(link(body.total_pages, 'last'));
  reply.header('link', links.join(', '));
}
