// The collections of OGC API – Features (`/ogc/collections/{id}`): the records the keyless map publishes
// (web/map.queries.ts), by the REST lists' own queries, so each feature's properties are the list's item: the active
// chapters that have coordinates, and the upcoming events that have them (docs/api.md, "OGC API – Features").
import type { TObject } from '@sinclair/typebox';
import type { Db } from '../../db/index.ts';
import type { ListQuery } from '../v0/common/pagination.ts';
import type { GeoColumns } from '../v0/common/geojson.ts';
import type { OrderTerm } from '../v0/common/ordering.ts';
import { listChapters } from '../v0/chapters/chapters.queries.ts';
import { ChapterItem } from '../v0/chapters/chapters.schemas.ts';
import { listEvents } from '../v0/events/events.queries.ts';
import { EventItem } from '../v0/events/events.schemas.ts';

export interface Collection {
  id: string;
  title: string;
  description: string;
  /** The list item: the properties of each feature, in this order. */
  item: TObject;
  /** The records of the collection, as a REST list's query gives them (filtered, unordered, unpaged). */
  query: (db: Db) => ListQuery | Promise<ListQuery>;
  /** The coordinates, and the key that is each feature's `id` (and `…/items/{id}`). */
  geo: Required<GeoColumns>;
  /** The order of the pages: the table's primary key (stable, indexed). */
  order: OrderTerm[];
}

export const COLLECTIONS: readonly Collection[] = [
  {
    id: 'chapters',
    title: 'OWASP chapters',
    description: 'The active OWASP chapters that have coordinates: the records of GET /api/v0/chapters/.',
    item: ChapterItem,
    query: (db) => listChapters(db, {}),
    geo: { latitude: 'chapters.latitude', longitude: 'chapters.longitude', id: 'chapters.key' },
    order: [{ column: 'chapters.id', direction: 'asc' }],
  },
  {
    id: 'events',
    title: 'Upcoming OWASP events',
    description:
      'The OWASP events that have not ended (UTC) and have coordinates: GET /api/v0/events/?is_upcoming=true.',
    item: EventItem,
    query: (db) => listEvents(db, { is_upcoming: true }),
    geo: { latitude: 'events.latitude', longitude: 'events.longitude', id: 'events.key' },
    order: [{ column: 'events.id', direction: 'asc' }],
  },
];
