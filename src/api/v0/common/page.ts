// The page a list request asks for and the page facts its answer states: shared by the JSON envelope
// (pagination.ts) and the GeoJSON collection (geojson.ts).
export interface Page {
  page: number;
  limit: number;
  /** The opaque position given by the client (keyset.ts); `page` then only numbers the page. */
  cursor?: string;
}

/** The envelope's facts about the page (its totals and neighbours). */
export interface PageInfo {
  count: number;
  total_pages: number;
  has_next: boolean;
  has_previous: boolean;
}
