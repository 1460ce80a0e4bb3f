// The query parameters of `…/items` (OGC API – Features 1.0, 7.15): `limit`, `bbox`, and `page`, this service's
// position in the pages (the `next` and `prev` links carry it; a client need not know it). `f=json` is accepted, as
// many clients send it. Any other parameter is a 400 (the standard's requirement /req/core/query-param-unknown).
import { invalidParam } from '../../errors.ts';
import type { Box } from './ogc.queries.ts';

/** The standard's own example of a limit's schema: default 10, at most 10,000 (a larger one gives 10,000). */
export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 10_000;

export const ITEMS_PARAMS = ['limit', 'bbox', 'page', 'f'] as const;

export interface ItemsQuery {
  limit: number;
  page: number;
  box?: Box;
}

function positiveInteger(name: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw.trim()) || Number(raw) < 1)
    throw invalidParam('query', name, 'must be a whole number of at least 1');
  return Number(raw);
}

/** `bbox=west,south,east,north` (or the six numbers of a 3D box, whose heights are not used), WGS 84 degrees. */
function parseBox(raw: unknown): Box | undefined {
  if (raw === undefined) return undefined;
  const parts = typeof raw === 'string' ? raw.split(',').map((part) => part.trim()) : [];
  const numbers = parts.map((part) => (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(part) ? Number(part) : NaN));
  if ((numbers.length !== 4 && numbers.length !== 6) || numbers.some((n) => !Number.isFinite(n)))
    throw invalidParam('query', 'bbox', 'must be four numbers: west,south,east,north (WGS 84 degrees)');
  const [west, south, east, north] =
    numbers.length === 4 ? numbers : [numbers[0]!, numbers[1]!, numbers[3]!, numbers[4]!];
  if (south! > north! || south! < -90 || north! > 90)
    throw invalidParam('query', 'bbox', 'south and north must be latitudes from -90 to 90, south not above north');
  if (west! < -180 || west! > 180 || east! < -180 || east! > 180)
    throw invalidParam('query', 'bbox', 'west and east must be longitudes from -180 to 180');
  return { west: west!, south: south!, east: east!, north: north! };
}

export function parseItemsQuery(query: Record<string, unknown>): ItemsQuery {
  for (const name of Object.keys(query))
    if (!(ITEMS_PARAMS as readonly string[]).includes(name))
      throw invalidParam('query', name, `is not a parameter of items (${ITEMS_PARAMS.join(', ')})`);
  for (const [name, value] of Object.entries(query))
    if (typeof value !== 'string') throw invalidParam('query', name, 'may be given once');
  const f = query.f as string | undefined;
  if (f !== undefined && !['json', 'geojson'].includes(f.trim().toLowerCase()))
    throw invalidParam('query', 'f', 'must be json or geojson: the features are GeoJSON');
  const box = parseBox(query.bbox);
  return {
    limit: Math.min(positiveInteger('limit', query.limit) ?? DEFAULT_LIMIT, MAX_LIMIT),
    page: positiveInteger('page', query.page) ?? 1,
    ...(box ? { box } : {}),
  };
}
