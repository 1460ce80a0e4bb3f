// The two shapes of every REST operation: a paged list and a detail. Each resource declares its
// schemas, ordering and query functions; the request handling (paging, counting, seeking, rendering)
// is here alone, the same everywhere.
import type { FastifyInstance } from 'fastify';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { NotFoundError } from '../../../errors.ts';
export type { ListQuery } from './pagination.ts';
import { ERROR_RESPONSES, ErrorMessage, ListBody, NotFoundBody, orderingParam, PageParams, Query } from './schemas.ts';
import { allowedOrderings, parseOrdering, type OrderingSpec, type OrderTerm } from './ordering.ts';
import { BoundaryCache } from './keyset.ts';
import { CountCache, onTablesChange } from './counts.ts';
import {
  envelopeJson,
  fetchPage,
  itemColumns,
  pageInfo,
  pageOf,
  setLinkHeader,
  type ListPage,
  type ListQuery,
  type PageQuery,
} from './pagination.ts';
import { normalizeQuery } from './query.ts';
import { strictIntegerParams } from './params.ts';
import { changeFilter, changeParams, type ChangeWindow } from './changes.ts';
import { referenceTag } from '../openapi/openapi.ts';
import {
  FeatureCollectionBody,
  featureCollectionJson,
  GEOJSON_TYPE,
  LIST_MEDIA_TYPES,
  listMediaType,
  NotAcceptableBody,
  type GeoColumns,
} from './geojson.ts';

interface Operation {
  path: string;
  operationId: string;
  summary: string;
  description?: string;
}

export interface ListDefinition<
  F extends TObject,
  Item extends TObject,
  P extends TObject = TObject,
> extends Operation {
  filters: F;
  /** Path parameters of a list under a record (`/snapshots/{snapshot_id}/issues/`): given to query, which throws NotFoundError. */
  params?: P;
  item: Item;
  /** The item's OpenAPI component name, the reference's (`Chapter`); the page is `Paged` + this name. */
  itemName: string;
  /** Public ordering names → SQL columns: declared beside the query (`*.queries.ts`), since it names its columns. */
  ordering: OrderingSpec;
  /** The default ordering when it depends on the filters (events with is_upcoming). */
  defaultOrdering?: (query: Static<F>) => string;
  /** Where the records keep their coordinates: the list also answers `Accept: application/geo+json` (geojson.ts). */
  geo?: GeoColumns;
  /** The filtered rows (ListQuery); async when a filter is looked up first (one repository), or a path parameter. */
  query: (db: Db, filters: Static<F>, params: Static<P>) => ListQuery | Promise<ListQuery>;
  /**
   * The time window of incremental consumption (changes.ts). By default `updated_after`/`updated_before` on
   * the `updated_at` ordering's column, for every list that orders by `updated_at`.
   */
  changes?: ChangeWindow;
}

/** What a list request asks for, once its parameters are read: the steps of listRoute, one function each. */
interface ListRequest<F extends TObject> {
  filters: Static<F>;
  page: ListPage;
  order: OrderTerm[];
  /** The `updated_after`/`updated_before` window, as a condition. */
  changed?: ReturnType<typeof changeFilter>;
}

export function listRoute<F extends TObject, Item extends TObject, P extends TObject = TObject>(
  app: FastifyInstance,
  def: ListDefinition<F, Item, P>,
): void {
  const updatedAt = def.ordering.fields.updated_at;
  const changes = def.changes ?? (updatedAt ? { name: 'updated', column: updatedAt } : undefined);
  const querystring = Query({
    ...def.filters.properties,
    ...(changes ? changeParams(changes) : {}),
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

  /** Parameters → filters, page, ordering. */
  const read = (raw: Record<string, unknown>): ListRequest<F> => {
    const query = raw as Static<F> & PageQuery & { ordering?: string };
    const changed = changes ? changeFilter(changes, raw) : undefined;
    return {
      filters: query,
      page: { ...pageOf(query), counts, columns, boundaries },
      order: parseOrdering(def.ordering, query.ordering ?? def.defaultOrdering?.(query)),
      ...(changed ? { changed } : {}),
    };
  };

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
        response: {
          200: ListBody(item, def.itemName),
          ...(def.params ? { 404: ErrorMessage } : {}),
          ...(def.geo ? { 406: NotAcceptableBody } : {}),
          ...ERROR_RESPONSES,
        },
      },
      config: {
        openapi: {
          kind: 'list',
          noun: def.itemName,
          ordering,
          orderingDefault: def.ordering.default,
          ...(def.geo ? { geo: FeatureCollectionBody(item, def.itemName) } : {}),
        },
        ...(def.geo ? { mediaTypes: LIST_MEDIA_TYPES } : {}),
      },
    },
    async (request, reply) => {
      const { filters, page: listed, order, changed } = read(request.query as Record<string, unknown>);
      const geo = def.geo && listMediaType(request, reply) === GEOJSON_TYPE ? def.geo : undefined;
      const page: ListPage = geo ? { ...listed, geo } : listed;
      const db = listDb(app);
      const filtered = await def.query(db, filters, request.params as Static<P>);
      const rows = changed ? filtered.where(changed) : filtered;
      const { items, count, next, hasNext } = await fetchPage(db, rows, order, page);
      const info = pageInfo(count, page, hasNext);
      setLinkHeader(request, reply, info, page, next);
      // Already JSON: with a JSON content type Fastify sends a string as it is.
      if (geo) return reply.type(`${GEOJSON_TYPE}; charset=utf-8`).send(featureCollectionJson(items, info, page));
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
        response: {
          200: { ...def.response, title: `${def.resource}Detail` },
          404: NotFoundBody(def.resource),
          ...ERROR_RESPONSES,
        },
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
