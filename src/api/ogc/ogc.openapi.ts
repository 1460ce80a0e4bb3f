// The API definition the landing page links as `service-desc`: OpenAPI 3.0, the paths of /ogc/ and their parameters,
// so that a client (GDAL reads `limit`'s maximum from it) knows what the items take.
import { VERSION } from '../../version.ts';
import { COLLECTIONS } from './ogc.collections.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from './ogc.params.ts';

const json = (description: string, type = 'application/json') => ({
  description,
  content: { [type]: { schema: { type: 'object' } } },
});
const ERRORS = { 400: json('Invalid request'), 404: json('Not found'), 406: json('Not acceptable') };
const collectionId = {
  name: 'collectionId',
  in: 'path',
  required: true,
  schema: { type: 'string', enum: COLLECTIONS.map((collection) => collection.id) },
};

export function ogcOpenApi(root: string) {
  const keyed = [{ apiKey: [] }];
  return {
    openapi: '3.0.3',
    info: { title: 'OWASP community data: OGC API – Features', version: VERSION },
    servers: [{ url: root }],
    components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
    paths: {
      '/': { get: { operationId: 'getLandingPage', responses: { 200: json('The landing page') } } },
      '/conformance': { get: { operationId: 'getConformance', responses: { 200: json('The conformance classes') } } },
      '/collections': {
        get: { operationId: 'getCollections', security: keyed, responses: { 200: json('The collections') } },
      },
      '/collections/{collectionId}': {
        get: {
          operationId: 'describeCollection',
          security: keyed,
          parameters: [collectionId],
          responses: { 200: json('The collection'), ...ERRORS },
        },
      },
      '/collections/{collectionId}/items': {
        get: {
          operationId: 'getFeatures',
          security: keyed,
          parameters: [
            collectionId,
            {
              name: 'limit',
              in: 'query',
              style: 'form',
              explode: false,
              schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
            },
            {
              name: 'bbox',
              in: 'query',
              style: 'form',
              explode: false,
              schema: { type: 'array', minItems: 4, maxItems: 6, items: { type: 'number' } },
            },
            { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 } },
          ],
          responses: { 200: json('The features', 'application/geo+json'), ...ERRORS },
        },
      },
      '/collections/{collectionId}/items/{featureId}': {
        get: {
          operationId: 'getFeature',
          security: keyed,
          parameters: [collectionId, { name: 'featureId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: json('The feature', 'application/geo+json'), ...ERRORS },
        },
      },
    },
  };
}
