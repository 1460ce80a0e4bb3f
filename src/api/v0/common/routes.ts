// The two shapes of every REST operation: a paged list and a detail. Each resource declares its
// schemas, ordering and query functions; the request handling is the same everywhere.
import type { FastifyInstance } from 'fastify';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { NotFoundError } from '../../../errors.ts';
import { ERROR_RESPONSES, ErrorMessage, ListBody, NotFoundBody, orderingParam, PageParams, Query } from './schemas.ts';
import { allowedOrderings, parseOrdering, type OrderingSpec, type OrderTerm } from './ordering.ts';
import { BoundaryCache } from './keyset.ts';
import { CountCache, onTablesChange } from './counts.ts';
import { envelopeJson, itemColumns, pageInfo, pageOf, setLinkHeader, type ListPage, type PageResult } from './pagination.ts';
import { normalizeQuery } from './query.ts';
import { strictIntegerParams } from './params.ts';
import { referenceTag } from '../../../plugins/openapi.ts';

interface Operation {
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** Unused: the OpenAPI tag is the reference's for the path (`referenceTag`), so that every route gets it alike. */
  tag?: string;
}

export interface ListDefinition<F extends TObject, Item extends TObject, P extends TObject = TObject> extends Operation {
  filters: F;
  /** Path parameters of a list under a record (`/snapshots/{snapshot_id}/issues/`): given to fetch, which throws NotFoundError. */
  params?: P;
  item: Item;
  /** The item's OpenAPI component name, the reference's (`Chapter`); the page is `Paged` + this name. */
  itemName: string;
  ordering: OrderingSpec;
  /** The default ordering when it depends on the filters (events with is_upcoming). */
  defaultOrdering?: (query: Static<F>) => string;
  /** One page, rendered by fetchPage: the query must select exactly the item's fields. */
  fetch: (db: Db, query: Static<F>, order: OrderTerm[], page: ListPage, params: Static<P>) => Promise<PageResult>;
}

export function listRoute<F extends TObject, Item extends TObject, P extends TObject = TObject>(
  app: FastifyInstance,
  def: ListDefinition<F, Item, P>,
): void {
  const querystring = Query({
    ...def.filters.properties,
    ...PageParams,
    ordering: orderingParam(allowedOrderings(def.ordering), def.ordering.default),
  });
  const counts = new CountCache();
  const boundaries = new BoundaryCache();
  const columns = itemColumns(def.item);
  const item = { ...def.item, title: def.itemName };
  const ordering = allowedOrderings(def.ordering);
  // Per table: a change to releases leaves the totals of chapters as they are (docs/counts.md).
  onTablesChange(app, counts);
  onTablesChange(app, boundaries);
  app.get(
    def.path,
    {
      preValidation: def.params ? [strictIntegerParams, normalizeQuery] : normalizeQuery,
      schema: {
        operationId: def.operationId,
        summary: def.summary,
        ...(def.description ? { description: def.description } : {}),
        tags: [referenceTag(def.path)],
        ...(def.params ? { params: def.params } : {}),
        querystring,
        response: { 200: ListBody(item, def.itemName), ...(def.params ? { 404: ErrorMessage } : {}), ...ERROR_RESPONSES },
      },
      config: { openapi: { kind: 'list', noun: def.itemName, ordering, orderingDefault: def.ordering.default } },
    },
    async (request, reply) => {
      const query = request.query as Static<F> & { ordering?: string; page?: number; limit?: number; page_size?: number; cursor?: string };
      const page: ListPage = { ...pageOf(query), counts, columns, boundaries };
      const order = parseOrdering(def.ordering, query.ordering ?? def.defaultOrdering?.(query));
      const { items, count, next, hasNext } = await def.fetch(listDb(app), query, order, page, request.params as Static<P>);
      const info = pageInfo(count, page, hasNext);
      setLinkHeader(request, reply, info, page, next);
      // Already JSON: with a JSON content type Fastify sends a string as it is.
      reply.type('application/json; charset=utf-8');
      return envelopeJson(items, info, page);
    },
  );
}

/** The database of list queries: their own pool and statement timeout when the database has one (Database.lists). */
export function listDb(app: FastifyInstance): Db {
  return app.database.lists ?? app.database.db;
}

export interface DetailDefinition<P extends TObject, Row, Body extends TSchema> extends Operation {
  params: P;
  response: Body;
  /** `Chapter` in `{"message": "Chapter not found"}`; also names the components `ChapterDetail` and `ChapterError`. */
  resource: string;
  fetch: (db: Db, params: Static<P>) => Promise<Row | undefined>;
  present: (row: Row) => Static<Body>;
}

export function detailRoute<P extends TObject, Row, Body extends TSchema>(
  app: FastifyInstance,
  def: DetailDefinition<P, Row, Body>,
): void {
  app.get(
    def.path,
    {
      preValidation: strictIntegerParams,
      schema: {
        operationId: def.operationId,
        summary: def.summary,
        ...(def.description ? { description: def.description } : {}),
        tags: [referenceTag(def.path)],
        params: def.params,
        // The reference's component names: `ChapterDetail`, and `ChapterError` for the 404.
        response: { 200: { ...def.response, title: `${def.resource}Detail` }, 404: NotFoundBody(def.resource), ...ERROR_RESPONSES },
      },
      config: { openapi: { kind: 'detail', noun: def.resource } },
    },
    async (request) => {
      const row = await def.fetch(app.database.db, request.params as Static<P>);
      if (row === undefined) throw new NotFoundError(def.resource);
      return def.present(row);
    },
  );
}
