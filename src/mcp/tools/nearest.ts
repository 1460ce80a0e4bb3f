// `nearest`: the chapters or events nearest a place (a name our offline gazetteer knows) or a point: the list with
// `near=LAT,LON`, nearest first, each with `distance_km`.
import { locate } from '../../data/geocode/geocode.ts';
import { loadGazetteer } from '../../data/geocode/geocode.gazetteer.ts';
import { API_PREFIX } from '../mcp.catalogue.ts';
import { ToolError } from '../mcp.input.ts';
import { ANNOTATIONS, cursorSchema, fieldsParam, fieldsSchema, limitSchema, pageOf, type ToolFactory } from './tool.ts';

const DISTANCE = 'distance_km';

export const nearestTool: ToolFactory = (catalogue) => {
  const entries = [...catalogue.lists.values()].filter((e) => e.near);
  return {
    name: 'nearest',
    title: 'Find OWASP chapters or events near a place',
    description:
      'The chapters or events nearest a place, nearest first, each with `distance_km` (great-circle). Give `place` ' +
      '(a city, a region or a country, in English or as written locally: "Amsterdam", "Portland, Maine", "Kenya"), ' +
      'or `latitude` and `longitude`. `radius_km` keeps only those within it; `upcoming_only` (events) keeps events ' +
      'that have not ended. `origin` tells where the place was found. Pages like `list` (`next_cursor`).',
    inputSchema: {
      type: 'object',
      properties: {
        resource: { type: 'string', enum: entries.map((e) => e.resource), description: 'Chapters or events.' },
        place: { type: 'string', minLength: 1, maxLength: 200, description: 'A city, region or country name.' },
        latitude: { type: 'number', minimum: -90, maximum: 90, description: 'Instead of `place`, with `longitude`.' },
        longitude: { type: 'number', minimum: -180, maximum: 180, description: 'Instead of `place`, with `latitude`.' },
        radius_km: { type: 'number', minimum: 0.1, maximum: 20_000, description: 'Only records within this distance.' },
        upcoming_only: { type: 'boolean', description: 'Events only: those ending today (UTC) or later.' },
        limit: limitSchema(100),
        cursor: cursorSchema,
        fields: fieldsSchema,
      },
      required: ['resource'],
      additionalProperties: false,
    },
    annotations: ANNOTATIONS,
    async run(args, rest) {
      const entry = catalogue.lists.get(String(args.resource))!;
      const point = args.latitude !== undefined || args.longitude !== undefined;
      if (point === (args.place !== undefined))
        throw new ToolError('Give either `place`, or `latitude` and `longitude`');
      if (point && (args.latitude === undefined || args.longitude === undefined))
        throw new ToolError('Give both `latitude` and `longitude`');
      if (args.upcoming_only !== undefined && entry.resource !== 'events')
        throw new ToolError('`upcoming_only` applies to events only');
      const origin = point
        ? { latitude: Number(args.latitude), longitude: Number(args.longitude) }
        : await placeOf(String(args.place));
      // Decimal degrees as REST reads them (never `1e-7`), to the micro-degree (0.1 m).
      const degrees = (value: number) => String(Math.round(value * 1e6) / 1e6);
      const query = new URLSearchParams({ near: `${degrees(origin.latitude)},${degrees(origin.longitude)}` });
      if (args.radius_km !== undefined) query.set('radius_km', String(args.radius_km));
      if (args.upcoming_only === true) query.set('is_upcoming', 'true');
      query.set('limit', String(args.limit ?? 10));
      if (args.cursor !== undefined) query.set('cursor', String(args.cursor));
      const fields = fieldsParam(entry, args.fields, [DISTANCE]);
      if (fields) query.set('fields', fields);
      const page = pageOf(entry.resource, await rest(`${API_PREFIX}/${entry.resource}/`, query));
      return { origin, ...(args.radius_km !== undefined ? { radius_km: args.radius_km } : {}), ...page };
    },
  };
};

async function placeOf(place: string) {
  // The first place asked for waits for the gazetteer's cities, read in a worker thread (~1 s) while the event loop
  // answers everything else.
  await loadGazetteer();
  const found = locate({ name: place });
  if (!found)
    throw new ToolError(
      `Unknown place "${place.slice(0, 100)}": name a city, a region or a country ("Vienna", "Vienna, Austria", ` +
        '"Kenya"), or give latitude and longitude',
    );
  return {
    place,
    found: { name: found.place, level: found.level, country_code: found.countryCode },
    latitude: found.latitude,
    longitude: found.longitude,
  };
}
