// The two shapes of every REST operation: a paged list and a detail. Each resource declares its
// schemas, ordering and query functions; the request handling (paging, counting, seeking, rendering)
// is here alone, the same everywhere.
import type { FastifyInstance } from 'fastify';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { NotFoundError } from '../../../errors.ts';
import { sql } from 'kysely';
import { Type } from '@sinclair/typebox';
export type { ListQuery } from './pagination.ts';
import { ERROR_RESPONSES, ErrorMessage, ListBody, NotFoundBody, orderingParam, PageParams, Query } from './schemas.ts';
import { allowedOrderings, parseOrdering, type OrderingSpec, type OrderTerm } from './ordering.ts';
import { fieldsParam, pickFields, readFields } from './fields.ts';
import {
  fetchGroups,
  groupByParam,
  GroupsBody,
  groupsBytes,
  groupsJson,
  type GroupFields,
  type Groups,
} from './groups.ts';
import { DISTANCE_ORDERING, NEAR_FIELD, NearParams, nearness, nearRows, readNear, type Nearness } from './near.ts';
import { invalidParam } from '../../../errors.ts';
import { BoundaryCache } from './keyset.ts';
import { CountCache, onTablesChange } from './counts.ts';
import { itemColumns } from '../../../db/statements.ts';
import {
  envelopeJson,
  fetchPage,
  pageInfo,
  pageOf,
  setLinkHeader,
  type ListPage,
  type ListQuery,
  type PageQuery,
} from './pagination.ts';
import { normalizeQuery } from './query.ts';
import { strictIntegerParams } from './params.ts';
import { changeFilter, changeParams, type ChangeWindow } from './updated-window.ts';
import { referenceTag } from '../openapi/openapi.ts';
import { FeatureCollectionBody, featureCollectionJson, type GeoColumns } from './geojson.ts';
import {
  CALENDAR_CONTENT_TYPE,
  CALENDAR_TYPE,
  CSV_TYPE,
  detailFormatParam,
  formatParam,
  GEOJSON_TYPE,
  listFormats,
  listMediaType,
  mediaSchemas,
  mediaTypesOf,
  NotAcceptableBody,
  setContentDisposition,
} from './formats.ts';
import { CSV_CONTENT_TYPE, csvOfGroups, csvOfItems } from './csv.ts';

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
  /**
   * Where the records keep their coordinates: the list also answers `Accept: application/geo+json` (geojson.ts), and
   * with the column of their position on the sphere (`earth`), `near=LAT,LON` (near.ts).
   */
  geo?: GeoColumns & { earth?: string };
  /** The fields `group_by` accepts, each a column of the list's rows (groups.ts). */
  groups?: GroupFields;
  /** The list also answers `text/calendar` (`format=ics`): the calendar of a page, given its items in order. */
  calendar?: (db: Db, items: readonly Record<string, unknown>[]) => Promise<string>;
  /** The filtered rows (ListQuery); async when a filter is looked up first (one repository), or a path parameter. */
  query: (db: Db, filters: Static<F>, params: Static<P>) => ListQuery | Promise<ListQuery>;
  /**
   * The time window of incremental consumption (updated-window.ts). By default `updated_after`/`updated_before` on
   * the `updated_at` ordering's column, for every list that orders by `updated_at`.
   */
  changes?: ChangeWindow;
  /** Headers of every answer of the list, the same for each (the change log's `X-Poll-Interval`), and what they say. */
  headers?: Record<string, { value: string; description: string }>;
  /** Answers of the list beyond the usual ones, by status (the change log's 410). */
  responses?: Record<number, TSchema>;
}

/** What a list request asks for, once its parameters are read: the steps of listRoute, one function each. */
interface ListRequest<F extends TObject> {
  filters: Static<F>;
  page: ListPage;
  order: OrderTerm[];
  /** The `updated_after`/`updated_before` window, as a condition. */
  changed?: ReturnType<typeof changeFilter>;
  /** `near`: nearest first, with `distance_km`. */
  near?: Nearness;
  /** `group_by`: counts by this field instead of a page. */
  groupBy?: string;
  /** The fields of each item, in order: the CSV's columns. */
  names: string[];
  /** Whether `fields` chose them. */
  selected: boolean;
}

export function listRoute<F extends TObject, Item extends TObject, P extends TObject = TObject>(
  app: FastifyInstance,
  def: ListDefinition<F, Item, P>,
): void {
  const updatedAt = def.ordering.fields.updated_at;
  const changes = def.changes ?? (updatedAt ? { name: 'updated', column: updatedAt } : undefined);
  const counts = new CountCache();
  const groupCounts = new CountCache<Groups>(undefined, groupsBytes);
  const boundaries = new BoundaryCache();
  const names = Object.keys(def.item.properties);
  const columnList = itemColumns(def.item);
  const columnOf = new Map(names.map((name, i) => [name, columnList[i]!]));
  columnOf.set(NEAR_FIELD, sql`${sql.ref(`t.${NEAR_FIELD}`)}`);
  const earth = def.geo?.earth;
  // `distance` (with `near` only) is described there rather than listed: the enum holds what any request accepts.
  const ordering = allowedOrderings(def.ordering);
  const known = earth ? [...names, NEAR_FIELD] : names;
  // `distance_km`, the field `near` adds, is described with `near`: the item keeps the reference's schema.
  const item = { ...def.item, title: def.itemName };
  const formats = listFormats({ geo: def.geo !== undefined, calendar: def.calendar !== undefined });
  const headers = Object.entries(def.headers ?? {});
  const mediaTypes = mediaTypesOf(formats);
  const querystring = Query({
    ...def.filters.properties,
    ...(changes ? changeParams(changes) : {}),
    ...PageParams,
    ordering: orderingParam(ordering, def.ordering.default),
    fields: fieldsParam(known),
    ...(earth ? NearParams : {}),
    ...(def.groups ? { group_by: groupByParam(def.groups) } : {}),
    format: formatParam(formats),
  });
  // Per table: a change to releases leaves the totals of chapters as they are (docs/counts.md).
  onTablesChange(app, counts);
  onTablesChange(app, groupCounts);
  onTablesChange(app, boundaries);

  /** `ordering` with `near`: by distance unless other fields are named; `distance` alone, and only with `near`. */
  const orderOf = (value: string | undefined, query: Static<F>, near: Nearness | undefined): OrderTerm[] => {
    const named = value?.split(',').some((part) => part.trim().replace(/^-/, '') === DISTANCE_ORDERING) ?? false;
    if (named && !near) throw invalidParam('query', 'ordering', '`distance` needs `near` (LAT,LON)');
    if (named && value!.trim() !== DISTANCE_ORDERING)
      throw invalidParam('query', 'ordering', '`distance` is nearest first and stands alone');
    if (near && (value === undefined || named)) {
      return [near.term, { column: def.ordering.tieBreaker, direction: 'asc' }];
    }
    return parseOrdering(def.ordering, value ?? def.defaultOrdering?.(query));
  };

  /** Parameters → filters, page, ordering. */
  const read = (raw: Record<string, unknown>): ListRequest<F> => {
    const query = raw as Static<F> &
      PageQuery & { ordering?: string; fields?: string; near?: string; radius_km?: number; group_by?: string };
    const changed = changes ? changeFilter(changes, raw) : undefined;
    const point = earth ? readNear(query) : undefined;
    const near = earth && point ? nearness(earth, point) : undefined;
    const fields = readFields(query.fields, near ? known : names);
    if (query.group_by !== undefined) {
      if (query.cursor !== undefined) throw invalidParam('query', 'cursor', 'does not apply with `group_by`');
      if (fields !== undefined) throw invalidParam('query', 'fields', 'does not apply with `group_by`');
    }
    const shown = fields ?? (near ? known : names);
    return {
      names: shown,
      selected: fields !== undefined,
      filters: query,
      page: { ...pageOf(query), counts, columns: shown.map((name) => columnOf.get(name)!), boundaries },
      order: orderOf(query.ordering, query, near),
      ...(changed ? { changed } : {}),
      ...(near ? { near } : {}),
      ...(query.group_by !== undefined ? { groupBy: query.group_by } : {}),
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
          406: NotAcceptableBody,
          ...def.responses,
          ...ERROR_RESPONSES,
        },
      },
      config: {
        ...(def.headers ? { headers: Object.fromEntries(headers.map(([name, { value }]) => [name, value])) } : {}),
        openapi: {
          kind: 'list',
          ...(def.headers ? { headers: def.headers } : {}),
          noun: def.itemName,
          ordering,
          orderingDefault: def.ordering.default,
          ...(def.geo ? { geo: FeatureCollectionBody(item, def.itemName) } : {}),
          ...(def.groups ? { groups: GroupsBody(def.itemName, def.groups) } : {}),
          media: mediaSchemas(formats, names),
        },
        mediaTypes,
      },
      onSend: setContentDisposition,
    },
    async (request, reply) => {
      const listed = read(request.query as Record<string, unknown>);
      const { filters, order, changed, near, groupBy } = listed;
      const type = listMediaType(request, reply, mediaTypes);
      const geo = type === GEOJSON_TYPE ? def.geo : undefined;
      if (geo && groupBy !== undefined) throw invalidParam('query', 'group_by', 'answers JSON, not GeoJSON');
      if (type === CALENDAR_TYPE && groupBy !== undefined)
        throw invalidParam('query', 'group_by', 'answers JSON or CSV, not iCalendar');
      if (type === CALENDAR_TYPE && listed.selected)
        throw invalidParam('query', 'fields', 'does not apply to iCalendar, which has its own fields');
      const page: ListPage = geo ? { ...listed.page, geo } : listed.page;
      const db = listDb(app);
      const filtered = await def.query(db, filters, request.params as Static<P>);
      const changedRows = changed ? filtered.where(changed) : filtered;
      const rows = near ? nearRows(changedRows, near) : changedRows;
      if (groupBy !== undefined) {
        const groups = await fetchGroups(db, rows, def.groups![groupBy]!, groupCounts);
        if (type === CSV_TYPE) return reply.type(CSV_CONTENT_TYPE).send(csvOfGroups(groupBy, groups));
        reply.type('application/json; charset=utf-8');
        return groupsJson(groupBy, groups);
      }
      const { items, count, next, hasNext, returned } = await fetchPage(db, rows, order, page);
      const info = pageInfo(count, page, hasNext);
      setLinkHeader(request, reply, info, page, next);
      // Already JSON: with a JSON content type Fastify sends a string as it is.
      if (geo)
        return reply.type(`${GEOJSON_TYPE}; charset=utf-8`).send(featureCollectionJson(items, info, page, returned));
      if (type === CSV_TYPE) return reply.type(CSV_CONTENT_TYPE).send(csvOfItems(listed.names, items));
      if (type === CALENDAR_TYPE) {
        const calendar = await def.calendar!(db, JSON.parse(`[${items}]`) as Record<string, unknown>[]);
        return reply.type(CALENDAR_CONTENT_TYPE).send(calendar);
      }
      reply.type('application/json; charset=utf-8');
      return envelopeJson(items, info, page);
    },
  );
}

/**
 * The database of list queries: their own pool and statement timeout when the database has one (Database.lists), on a
 * read replica that has replayed the newest data version when there are replicas (db/server/replicas.ts).
 */
export function listDb(app: FastifyInstance): Db {
  return app.database.replicas?.lists ?? app.database.lists ?? app.database.db;
}

/** The database of the other REST reads (details): a current read replica's when there are replicas, else `db`. */
export function readDb(app: FastifyInstance): Db {
  return app.database.replicas?.db ?? app.database.db;
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
  const names = Object.keys((def.response as unknown as TObject).properties ?? {});
  app.get(
    def.path,
    {
      preValidation: [strictIntegerParams, normalizeQuery],
      schema: {
        operationId: def.operationId,
        summary: def.summary,
        ...(def.description ? { description: def.description } : {}),
        tags: [referenceTag(def.path)],
        params: def.params,
        // Other parameters are ignored, as they always were: only `fields` is read, and `format` checked.
        querystring: Type.Object({ fields: fieldsParam(names), format: detailFormatParam }),
        // The reference's component names: `ChapterDetail`, and `ChapterError` for the 404.
        response: {
          200: { ...def.response, title: `${def.resource}Detail` },
          404: NotFoundBody(def.resource),
          ...ERROR_RESPONSES,
        },
      },
      config: { openapi: { kind: 'detail', noun: def.resource } },
    },
    async (request, reply) => {
      const fields = readFields((request.query as { fields?: string }).fields, names);
      const row = await def.fetch(readDb(app), request.params as Static<P>);
      if (row === undefined) throw new NotFoundError(def.resource);
      const body = def.present(row);
      if (!fields) return body;
      // Serialized by the route's schema first, so that the selected fields read exactly as in the whole record.
      const whole = JSON.parse(String(reply.serialize(body))) as Record<string, unknown>;
      reply.type('application/json; charset=utf-8');
      return JSON.stringify(pickFields(whole, fields));
    },
  );
}
