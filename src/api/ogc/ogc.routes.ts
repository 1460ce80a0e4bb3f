// OGC API – Features – Part 1: Core, with GeoJSON (OGC 17-069r4), under /ogc/, so that GIS clients (GDAL's OAPIF
// driver, QGIS) page through every chapter and upcoming event: the landing page, the conformance declaration, the
// collections (ogc.collections.ts), their items and single features. The landing page, the conformance declaration
// and the API definition are public, as /api/v0/'s welcome; the collections and their features pass the same gate as
// /api/v0/ (the X-API-Key as REST_AUTH says, the rate limit). Features are rendered as the GeoJSON lists render them
// (common/pagination.ts, geojson.ts). Decisions in docs/api.md, "OGC API – Features".
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Gate } from '../../access/gate.ts';
import { keyExpirationHeader } from '../../access/authenticate.ts';
import { invalidParam, NotAcceptableError, NotFoundError } from '../../errors.ts';
import { FORMATS, GEOJSON_TYPE, JSON_TYPE, negotiate, type Format } from '../../http/negotiate.ts';
import { linkBase } from '../../http/link-base.ts';
import { CountCache, onTablesChange } from '../v0/common/counts.ts';
import { fetchPage } from '../v0/common/pagination.ts';
import { itemColumns } from '../../db/statements.ts';
import { readDb, listDb } from '../v0/common/routes.ts';
import { COLLECTIONS, type Collection } from './ogc.collections.ts';
import { withinBox, withKey } from './ogc.queries.ts';
import { ogcOpenApi } from './ogc.openapi.ts';
import { parseItemsQuery } from './ogc.params.ts';

export const OGC_PREFIX = '/ogc';
const OPENAPI_TYPE = 'application/vnd.oai.openapi+json;version=3.0';

export const CONFORMANCE = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
];

interface Link {
  href: string;
  rel: string;
  type: string;
  title?: string;
}

/** The JSON documents answer JSON; the features GeoJSON (or JSON, the same text, for a client that asks for it). */
function answerType(request: FastifyRequest, offered: readonly string[]): string {
  // `format` (checked against `offers` before: app.ts) names the type and wins over Accept, as on /api/v0/.
  const format = (request.query as { format?: unknown }).format;
  const named = typeof format === 'string' ? FORMATS[format.trim().toLowerCase() as Format] : undefined;
  if (named && offered.includes(named)) return named;
  const type = negotiate(request.headers.accept, offered);
  if (type === undefined) throw new NotAcceptableError(offered);
  return type;
}

function sendJson(reply: FastifyReply, type: string, body: unknown): FastifyReply {
  return reply.type(`${type}; charset=utf-8`).send(typeof body === 'string' ? body : JSON.stringify(body));
}

export interface OgcOptions {
  gate: Gate;
}

export async function ogcRoutes(app: FastifyInstance, { gate }: OgcOptions): Promise<void> {
  const base = (request: FastifyRequest) => `${linkBase(request)}${OGC_PREFIX}`;
  const byId = new Map(COLLECTIONS.map((collection) => [collection.id, collection]));
  const collectionOf = (id: string): Collection => {
    const collection = byId.get(id);
    if (!collection) throw new NotFoundError('Collection');
    return collection;
  };
  const counts = new CountCache();
  onTablesChange(app, counts);
  const hide = { schema: { hide: true } };
  // One representation each (the features also as plain JSON): a `format` or Accept they cannot answer is refused
  // before the handler (app.ts, checkOffered).
  const json = { ...hide, config: { offers: [JSON_TYPE] } };
  const features = { ...hide, config: { offers: [GEOJSON_TYPE, JSON_TYPE] } };

  app.get('/', json, (request, reply) => {
    const type = answerType(request, [JSON_TYPE]);
    const root = base(request);
    return sendJson(reply, type, {
      title: 'OWASP community data: OGC API – Features',
      description: 'The OWASP chapters and upcoming events as GeoJSON features (OGC API – Features – Part 1: Core).',
      links: [
        { href: `${root}/`, rel: 'self', type: JSON_TYPE, title: 'This document' },
        { href: `${root}/api`, rel: 'service-desc', type: OPENAPI_TYPE, title: 'The API definition (OpenAPI 3.0)' },
        { href: `${root}/conformance`, rel: 'conformance', type: JSON_TYPE, title: 'Conformance classes' },
        { href: `${root}/collections`, rel: 'data', type: JSON_TYPE, title: 'The collections' },
      ] satisfies Link[],
    });
  });

  app.get('/conformance', json, (request, reply) =>
    sendJson(reply, answerType(request, [JSON_TYPE]), { conformsTo: CONFORMANCE }),
  );

  app.get('/api', { ...hide, config: { offers: [OPENAPI_TYPE, JSON_TYPE] } }, (request, reply) =>
    sendJson(reply, answerType(request, [OPENAPI_TYPE, JSON_TYPE]), ogcOpenApi(base(request))),
  );

  await app.register((guarded, _options, registered) => {
    guarded.addHook('onRequest', async (request, reply) => {
      const authenticating = gate.authenticate(request);
      if (authenticating) await authenticating;
      const limiting = gate.limit(request, reply);
      if (limiting) await limiting;
    });
    guarded.addHook('onSend', (request, reply, payload, done) => {
      keyExpirationHeader(request, reply);
      done(null, payload);
    });

    const describe = (request: FastifyRequest, collection: Collection) => {
      const root = `${base(request)}/collections/${collection.id}`;
      return {
        id: collection.id,
        title: collection.title,
        description: collection.description,
        itemType: 'feature',
        crs: ['http://www.opengis.net/def/crs/OGC/1.3/CRS84'],
        extent: {
          spatial: { bbox: [[-180, -90, 180, 90]], crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' },
        },
        links: [
          { href: root, rel: 'self', type: JSON_TYPE, title: collection.title },
          { href: `${root}/items`, rel: 'items', type: GEOJSON_TYPE, title: `${collection.title} (GeoJSON)` },
        ] satisfies Link[],
      };
    };

    guarded.get('/collections', json, (request, reply) => {
      const type = answerType(request, [JSON_TYPE]);
      return sendJson(reply, type, {
        links: [{ href: `${base(request)}/collections`, rel: 'self', type: JSON_TYPE }] satisfies Link[],
        collections: COLLECTIONS.map((collection) => describe(request, collection)),
      });
    });

    guarded.get<{ Params: { collectionId: string } }>('/collections/:collectionId', json, (request, reply) => {
      const collection = collectionOf(request.params.collectionId);
      return sendJson(reply, answerType(request, [JSON_TYPE]), describe(request, collection));
    });

    guarded.get<{ Params: { collectionId: string } }>(
      '/collections/:collectionId/items',
      features,
      async (request, reply) => {
        const collection = collectionOf(request.params.collectionId);
        const { limit, page, box } = parseItemsQuery(request.query as Record<string, unknown>);
        const type = answerType(request, [GEOJSON_TYPE, JSON_TYPE]);
        const all = await collection.query(listDb(app));
        const rows = box ? withinBox(all, collection.geo, box) : all;
        const result = await fetchPage(listDb(app), rows, collection.order, {
          page,
          limit,
          counts,
          columns: itemColumns(collection.item),
          geo: collection.geo,
        });
        const self = `${base(request)}/collections/${collection.id}/items`;
        const params = (p: number) => {
          const search = new URLSearchParams({ limit: String(limit) });
          if (box) search.set('bbox', [box.west, box.south, box.east, box.north].join(','));
          if (p > 1) search.set('page', String(p));
          return `${self}?${search.toString()}`;
        };
        const links: Link[] = [
          { href: params(page), rel: 'self', type: GEOJSON_TYPE, title: 'This page' },
          { href: `${base(request)}/collections/${collection.id}`, rel: 'collection', type: JSON_TYPE },
        ];
        if (page * limit < result.count) links.push({ href: params(page + 1), rel: 'next', type: GEOJSON_TYPE });
        if (page > 1) links.push({ href: params(page - 1), rel: 'prev', type: GEOJSON_TYPE });
        return sendJson(
          reply,
          type,
          `{"type":"FeatureCollection","features":[${result.items}],"numberMatched":${result.count},` +
            `"numberReturned":${result.returned},"timeStamp":"${new Date().toISOString()}","links":${JSON.stringify(links)}}`,
        );
      },
    );

    guarded.get<{ Params: { collectionId: string; featureId: string } }>(
      '/collections/:collectionId/items/:featureId',
      features,
      async (request, reply) => {
        const collection = collectionOf(request.params.collectionId);
        const unknown = Object.keys(request.query as object).filter((name) => name !== 'f');
        if (unknown.length > 0) throw invalidParam('query', unknown[0]!, 'is not a parameter of a feature');
        const type = answerType(request, [GEOJSON_TYPE, JSON_TYPE]);
        const db = readDb(app);
        const rows = withKey(await collection.query(db), collection.geo.id, request.params.featureId);
        const result = await fetchPage(db, rows, collection.order, {
          page: 1,
          limit: 1,
          counts,
          columns: itemColumns(collection.item),
          geo: collection.geo,
        });
        if (result.items === '') throw new NotFoundError('Feature');
        const root = `${base(request)}/collections/${collection.id}`;
        const links: Link[] = [
          { href: `${root}/items/${encodeURIComponent(request.params.featureId)}`, rel: 'self', type: GEOJSON_TYPE },
          { href: root, rel: 'collection', type: JSON_TYPE },
        ];
        return sendJson(reply, type, `${result.items.slice(0, -1)},"links":${JSON.stringify(links)}}`);
      },
    );
    registered();
  });
}
