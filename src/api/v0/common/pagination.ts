// Page/limit pagination with the envelope of the contract and an RFC 8288 Link header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sql, type SelectQueryBuilder } from 'kysely';
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
  /** Totals already counted for this data version, by count query (set by the list routes). */
  counts?: CountCache;
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

export interface Envelope<T> {
  items: T[];
  count: number;
  total_count: number;
  current_page: number;
  total_pages: number;
  has_next: boolean;
  has_previous: boolean;
}

/**
 * Runs a filtered query for one page and, beside it, the count of all matching records. Two cheap
 * queries beat one with a window count: the page can stop after `limit` rows read in index order,
 * where `count(*) over ()` would make every page read and sort every matching row. The total of
 * a filter set is counted once per data version: the other pages of a listing reuse it.
 */
export async function fetchPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  order: OrderTerm[],
  { page, limit, counts }: Page,
): Promise<{ rows: O[]; count: number }> {
  let ordered = query;
  for (const term of order) ordered = ordered.orderBy(sql.ref(term.column), term.direction);
  const countQuery = query.clearSelect().select(sql<string>`count(*)`.as('n'));
  const compiled = countQuery.compile();
  const key = `${compiled.sql}\u0000${JSON.stringify(compiled.parameters)}`;
  const known = counts?.get(key);
  const [rows, total] = await Promise.all([
    ordered.limit(limit).offset((page - 1) * limit).execute(),
    known ?? countQuery.executeTakeFirstOrThrow().then((row) => Number((row as { n: string }).n)),
  ]);
  if (known === undefined) counts?.set(key, total);
  return { rows: rows as O[], count: total };
}

export function envelope<T>(items: T[], count: number, { page, limit }: Page): Envelope<T> {
  const totalPages = Math.max(1, Math.ceil(count / limit));
  return {
    items,
    count,
    total_count: count,
    current_page: page,
    total_pages: totalPages,
    has_next: page < totalPages,
    has_previous: page > 1,
  };
}

export function setLinkHeader(request: FastifyRequest, reply: FastifyReply, body: Envelope<unknown>, page: Page): void {
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
