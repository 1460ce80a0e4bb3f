// OpenAPI 3.1 generated from the route schemas, served at /api/v0/openapi.json with Swagger UI at /api/v0/docs.
// The document has the reference's shape (OWASP Nest, Django Ninja), so that a client generated from it gets the
// reference's namespaces and types: tags, component names, the `ApiKey` scheme, `ordering` enums. Everything here
// is derived from what listRoute/detailRoute declare, so a route added later is documented the same way.
import type { FastifyInstance } from 'fastify';
import swagger, { type SwaggerTransformObject } from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { VERSION } from '../../../version.ts';
import { linkBase } from '../../../http/link-base.ts';
import { JSON_TYPE } from '../../../http/negotiate.ts';
import { exampleOf, hoistSchemas } from './openapi.document.ts';
import { OPENAPI_WEBHOOKS } from './openapi.webhooks.ts';

type Schema = Record<string, unknown>;

/** What a REST route tells the document beyond its schemas (set by listRoute/detailRoute in `config.openapi`). */
export interface OperationDoc {
  kind: 'list' | 'detail';
  /** `Chapter`: the record in words (`a page of chapters`, `the chapter`). */
  noun: string;
  /** The single values `ordering` accepts; combinations of them are accepted too. */
  ordering?: string[];
  orderingDefault?: string;
  /** The schema of the list's `application/geo+json` answer, when it has one (geojson.ts). */
  geo?: Schema;
  /** The schema of the list's `group_by` answer, when it has one (groups.ts). */
  groups?: Schema;
  /** The list's text representations (`text/csv`, `text/calendar`) by media type, beside JSON (formats.ts). */
  media?: Record<string, Schema>;
  /** Headers of the operation's own on its answers (the change log's `X-Poll-Interval`): their value and meaning. */
  headers?: Record<string, { value: string; description: string }>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    openapi?: OperationDoc;
  }
}

// The reference's tags, one per router, with the GitHub users, organizations and snapshots under `Community`.
export const TAG_DESCRIPTIONS: Record<string, string> = {
  Chapters: 'OWASP chapters: local groups, with their location and leaders.',
  Committees: 'OWASP committees.',
  Dumps: 'Every record of a resource in one file, for those who need all of it: no paging.',
  Changes:
    'The change log: every record created, updated or deleted, in order, to follow the data without reading it all.',
  Community:
    'The community around the projects: GitHub members and organizations, monthly snapshots, and the feed of records that left their lists.',
  Contribute: "Where to help: open, unassigned issues labelled for newcomers in the projects' repositories.",
  Events: 'OWASP events: conferences, AppSec Days, partner events.',
  Issues: 'GitHub issues of the mirrored repositories.',
  Labels: 'GitHub labels of the mirrored repositories.',
  Milestones: 'GitHub milestones of the mirrored repositories.',
  Projects: 'OWASP projects: tools, code and documentation, by level.',
  Releases: 'GitHub releases of the mirrored repositories.',
  Repositories: 'GitHub repositories mirrored by the service.',
  Search: 'One search over every resource, ranked, with the matched words marked.',
  Sponsors: 'Sponsors and supporting members of the OWASP Foundation.',
};

const COMMUNITY = new Set(['members', 'organizations', 'snapshots', 'deleted']);

/** The reference's tag of a REST path (`/chapters/:chapter_id` → `Chapters`, `/members/` → `Community`). */
export function referenceTag(path: string): string {
  const segment = path.split('/').find(Boolean) ?? '';
  return COMMUNITY.has(segment) ? 'Community' : segment.charAt(0).toUpperCase() + segment.slice(1);
}

const header = (description: string, example: string | number, type: 'string' | 'integer' = 'string') => ({
  type,
  description,
  example,
});
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': header(
    'Requests allowed per one-second window for this key (per client address when anonymous).',
    10,
    'integer',
  ),
  'RateLimit-Remaining': header('Requests left in the current window.', 9, 'integer'),
  'RateLimit-Reset': header('Seconds until the window ends (at least 1).', 1, 'integer'),
  'RateLimit-Policy': header(
    'The limit as draft-ietf-httpapi-ratelimit-headers states it: `q` requests per window of `w` seconds.',
    '"default";q=10;w=1',
  ),
  RateLimit: header(
    'The state of the limit (draft-ietf-httpapi-ratelimit-headers): `r` requests left, `t` seconds until the window ends.',
    '"default";r=9;t=1',
  ),
  'X-Request-Id': header(
    "The request's id: the client's own when it is 1-128 characters of `A-Za-z0-9._-`, else a new one; quote it to support.",
    '0f8fad5b-d9cb-469f-a165-70867728950e',
  ),
};
/** On every response a key authenticated (all of the document's but 401, and 429 when anonymous). */
const KEY_HEADERS = {
  'API-Key-Expiration': header(
    'When the API key of the request expires (RFC 3339, UTC): rotate or replace it before then.',
    '2027-01-31T00:00:00Z',
  ),
};
const CACHE_HEADERS = {
  ETag: header(
    'Strong validator of the body (SHA-1); send it back in `If-None-Match` to get 304 while nothing changed.',
    '"3f786850e387550fdab836ed7e6dc881de23001b"',
  ),
  'Cache-Control': header(
    'Keyed responses are for the client only, revalidated with the ETag. With REST_AUTH=optional, a keyless read is ' +
      '`public, max-age=0, s-maxage=EDGE_MAX_AGE_S, stale-while-revalidate=30, stale-if-error=86400` for a shared ' +
      'cache, with its tags in `Surrogate-Key` and `Cache-Tag` (docs/edge.md).',
    'private, no-cache',
  ),
  Vary: header('The body depends on the key only through authentication.', 'X-API-Key'),
  'X-Cache': header('`HIT` when served from the response cache, `MISS` when built (observability only).', 'MISS'),
};
const LINK = header(
  'RFC 8288 links to the `first`, `prev`, `next` and `last` pages, where they exist: absolute addresses on ' +
    '`PUBLIC_URL`, else on the scheme and host the request was sent to. `next` carries the `cursor` of the next page.',
  '<https://data.example.org/api/v0/chapters/?limit=100&page=1>; rel="first", ' +
    '<https://data.example.org/api/v0/chapters/?limit=100&page=2&cursor=WzEwMF0>; rel="next", ' +
    '<https://data.example.org/api/v0/chapters/?limit=100&page=4>; rel="last"',
);

function words(noun: string): string {
  return noun.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}
const plural = (text: string) => (/[^aeiou]y$/.test(text) ? `${text.slice(0, -1)}ies` : `${text}s`);

/** Response descriptions and headers; `x-response-description` and `headers` are read by @fastify/swagger. */
function documentResponses(doc: OperationDoc, responses: Record<string, Schema>): Record<string, Schema> {
  const noun = words(doc.noun);
  const described: Record<string, [string, Schema]> = {
    200:
      doc.kind === 'list'
        ? [
            `A page of ${plural(noun)}, in the envelope \`items\`, \`count\`, \`total_count\`, \`current_page\`, \`total_pages\`, \`has_next\`, \`has_previous\`.`,
            { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS, ...KEY_HEADERS, Link: LINK },
          ]
        : [`The ${noun}.`, { ...CACHE_HEADERS, ...RATE_LIMIT_HEADERS, ...KEY_HEADERS }],
    400: [
      'Invalid request: a query or path parameter is not valid; `errors` names each one.',
      { ...RATE_LIMIT_HEADERS, ...KEY_HEADERS },
    ],
    401: [
      'Missing, unknown, malformed, revoked or expired API key in `X-API-Key`.',
      { 'WWW-Authenticate': header('The scheme to use.', 'ApiKey realm="api", header="X-API-Key"') },
    ],
    404: [`No ${noun} with this identifier.`, { ...RATE_LIMIT_HEADERS, ...KEY_HEADERS }],
    429: [
      'Too many requests: over the per-key limit, or too many failed key attempts from this address.',
      { 'Retry-After': header('Seconds to wait before retrying.', 1, 'integer'), ...RATE_LIMIT_HEADERS },
    ],
    406: [
      `Not acceptable: the \`Accept\` header allows none of ${[
        'application/json',
        ...(doc.geo ? ['application/geo+json'] : []),
        ...Object.keys(doc.media ?? {}),
      ]
        .map((type) => `\`${type}\``)
        .join(', ')} (and no \`format\` names one).`,
      { Vary: header('The answer depends on `Accept`.', 'Accept'), ...RATE_LIMIT_HEADERS },
    ],
    410: [
      'Gone: the changes asked for (`after`, `since`) were removed by retention; `oldest_id` is the oldest kept. Start ' +
        'again from the dumps (`dumps`), then follow the changes after their `last_change_id`.',
      { ...RATE_LIMIT_HEADERS, ...KEY_HEADERS },
    ],
    503: [
      'Service unavailable: the database cannot be reached; retry later.',
      { 'Retry-After': header('Seconds to wait before retrying.', 5, 'integer') },
    ],
  };
  if (doc.geo) {
    described[200] = [
      `${described[200]![0]} With \`Accept: application/geo+json\`: a GeoJSON FeatureCollection of the ${plural(noun)} that have ` +
        'coordinates (a Point in [longitude, latitude] order, the list item as `properties`), with the same filters, ordering ' +
        'and pages, and the page fields as foreign members; records without coordinates are left out before paging, so ' +
        '`count` counts features. `application/json` is the default (also for `*/*`).',
      {
        ...described[200]![1],
        Vary: header(
          'The body depends on `Accept` (JSON or GeoJSON) and on the key only through authentication.',
          'X-API-Key, Accept',
        ),
      },
    ];
  }
  if (doc.media && Object.keys(doc.media).length > 0) {
    const calendar = doc.media['text/calendar'] ? ', with `Accept: text/calendar` or `format=ics` iCalendar' : '';
    described[200] = [
      `${described[200]![0]} With \`Accept: text/csv\` or \`format=csv\`: CSV, one row per record, the same ` +
        `filters, ordering, pages and \`Link\`, no envelope, and a \`Content-Disposition\` with a file name${calendar}. ` +
        '`format` wins over `Accept`.',
      {
        ...described[200]![1],
        Vary: header(
          'The body depends on `Accept` (without `format`) and on the key only through authentication.',
          'X-API-Key, Accept',
        ),
      },
    ];
  }
  if (doc.groups) {
    described[200] = [
      `${described[200]![0]} With \`group_by\`: the counts by that field instead of a page, as the schema of the ` +
        "operation's `x-group-by-response` (`…Groups`; kept out of this response's schema so that generated clients " +
        "keep the reference's page type).",
      described[200]![1],
    ];
  }
  if (doc.headers) {
    const own = Object.entries(doc.headers).map(([name, { value, description }]) => [name, header(description, value)]);
    described[200] = [described[200]![0], { ...described[200]![1], ...Object.fromEntries(own) }];
  }
  const out: Record<string, Schema> = {};
  for (const [status, schema] of Object.entries(responses)) {
    const [description, headers] = described[status] ?? [`Status ${status}.`, {}];
    const others = { ...(doc.geo ? { 'application/geo+json': doc.geo } : {}), ...doc.media };
    out[status] =
      status === '200' && Object.keys(others).length > 0
        ? {
            content: {
              'application/json': { schema },
              ...Object.fromEntries(Object.entries(others).map(([type, body]) => [type, { schema: body }])),
            },
            'x-response-description': description,
            headers,
          }
        : { ...schema, 'x-response-description': description, headers };
  }
  out[304] = {
    type: 'null',
    'x-response-description':
      'Not modified: the `If-None-Match` header matches the current ETag. No body. A 304 does not consume the rate ' +
      'limit (its count is given back; it still needs a valid key).',
    headers: { ETag: CACHE_HEADERS.ETag, ...RATE_LIMIT_HEADERS, ...KEY_HEADERS },
  };
  return out;
}

/**
 * `ordering` as an enum of its single values: a generated client types it like the reference's (a closed enum).
 * The service also accepts comma-separated combinations of them; the description says so (docs/decisions.md).
 */
function orderingParameter(doc: OperationDoc): Schema {
  const values = doc.ordering!;
  const combinations =
    values.length > 2
      ? `Several fields may be combined, comma-separated and without repeats (\`${values[2]},${values[1]}\`); the schema lists ` +
        'the single values so that generated clients keep an enumerated type. '
      : '';
  const fallback = doc.orderingDefault ? `Default \`${doc.orderingDefault}\`.` : '';
  return {
    type: 'string',
    enum: values,
    description: `Sort order: a field, descending with a leading \`-\`. ${combinations}${fallback}`,
  };
}

function documentRoute(schema: Schema, doc: OperationDoc | undefined): Schema {
  if (!doc) return schema;
  const out: Schema = { ...schema };
  const querystring = schema.querystring as { properties?: Record<string, Schema> } | undefined;
  if (doc.ordering && querystring?.properties?.ordering) {
    out.querystring = { ...querystring, properties: { ...querystring.properties, ordering: orderingParameter(doc) } };
  }
  // Conditional requests: an optional If-None-Match, answered by 304.
  const headers = schema.headers as { properties?: Schema } | undefined;
  out.headers = {
    ...headers,
    type: 'object',
    properties: {
      ...headers?.properties,
      'If-None-Match': {
        type: 'string',
        description: 'An ETag of an earlier response: 304 without a body while it still matches.',
      },
    },
  };
  out.response = documentResponses(doc, schema.response as Record<string, Schema>);
  // Every operation says what it answers (the lint rules of Redocly and Spectral ask for it), even where the resource
  // declares nothing of its own.
  out.description ??=
    doc.kind === 'detail'
      ? `One ${words(doc.noun)}, named by the path: every field of its record (\`fields\` selects some of them). ` +
        `404 with our error body when there is none.`
      : `The ${plural(words(doc.noun))}, a page at a time, with the filters, \`ordering\`, pages and cursor below.`;
  if (doc.groups) out['x-group-by-response'] = { schema: doc.groups };
  return out;
}

/** `icon`: the site's logo (SVG), for the documentation page's bar and favicon (the web layer owns the file). */
export async function registerOpenApi(app: FastifyInstance, icon?: Buffer): Promise<void> {
  const publicUrl = app.config.publicUrl?.replace(/\/+$/, '');
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        contact: { name: 'OWASP community data service', ...(publicUrl ? { url: `${publicUrl}/` } : {}) },
        title: 'OWASP community data API',
        version: VERSION,
        description:
          'Read-only REST API of the OWASP community data: chapters, committees, events, projects, sponsors, and the ' +
          'organizations, members, repositories, issues, labels, milestones and releases mirrored from GitHub. ' +
          'Authenticate with a personal API key in the `X-API-Key` header. Every response carries the ' +
          '`RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` headers and their IETF draft form ' +
          '(`RateLimit-Policy: "default";q=10;w=1`, `RateLimit: "default";r=9;t=1`); a 200 carries an `ETag` for ' +
          'conditional requests (`If-None-Match` → 304, which does not consume the limit), and a list a `Link` header ' +
          'to its pages. Every response to a key carries `API-Key-Expiration` (RFC 3339), and every response an ' +
          '`X-Request-Id`.',
        license: {
          name: 'Data: CC BY-SA 4.0 (OWASP) and MIT (GitHub samples)',
          url: 'https://creativecommons.org/licenses/by-sa/4.0/',
        },
      },
      components: {
        // The reference's name: its SDK's security option is `apiKey`, sent as the `ApiKey` scheme.
        securitySchemes: {
          ApiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: 'A personal API key (manage keys at /settings/api-keys).',
          },
        },
      },
      security: [{ ApiKey: [] }],
    },
    // Only the REST operations belong to the document.
    transform: ({ schema, url, route }) => ({
      schema: (url.startsWith('/api/v0/') && url !== '/api/v0/'
        ? documentRoute(schema as Schema, route.config?.openapi)
        : { ...schema, hide: true }) as typeof schema,
      url,
    }),
    transformObject: (documentObject) => {
      const document = (documentObject as { openapiObject: unknown }).openapiObject as Schema & {
        paths?: Record<string, Record<string, Schema>>;
        components?: Schema;
      };
      const used = new Set<string>();
      for (const methods of Object.values(document.paths ?? {})) {
        for (const operation of Object.values(methods)) {
          for (const tag of (operation.tags as string[] | undefined) ?? []) used.add(tag);
          for (const response of Object.values(
            (operation.responses ?? {}) as Record<string, { content?: Record<string, Schema> }>,
          )) {
            for (const media of Object.values(response.content ?? {}))
              media.example ??= exampleOf(media.schema as Schema);
          }
        }
      }
      const schemas = hoistSchemas(document);
      document.components = { ...document.components, schemas };
      document.webhooks = OPENAPI_WEBHOOKS;
      document.tags = [...used]
        .sort()
        .map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] ? { description: TAG_DESCRIPTIONS[name] } : {}) }));
      return document as ReturnType<SwaggerTransformObject>;
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/api/v0/docs',
    uiConfig: { deepLinking: true },
    ...docsTheme(icon),
  });
  // `servers`: where this service is reached, PUBLIC_URL or the scheme and host the document was asked of (as the
  // Link headers' addresses), so that a client generated from it has its base address.
  app.get('/api/v0/openapi.json', { schema: { hide: true }, config: { offers: [JSON_TYPE] } }, (request) => {
    const base = linkBase(request);
    return base ? { ...app.swagger(), servers: [{ url: base, description: 'This service' }] } : app.swagger();
  });
}

/**
 * The documentation page in the site's colours: our logo in Swagger UI's top bar instead of its own, the bar a link
 * back to the site (`/`) with its name, the site's favicon and a title. Files served by Swagger UI's own route (the
 * pages' CSP allows scripts and styles of our origin only).
 */
function docsTheme(icon: Buffer | undefined) {
  return {
    ...(icon ? { logo: { type: 'image/svg+xml', content: icon, href: '/', target: '_self' as const } } : {}),
    theme: {
      title: 'OWASP community data API: documentation',
      ...(icon
        ? { favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: icon }] }
        : {}),
      js: [{ filename: 'back-to-site.js', content: BACK_TO_SITE }],
      css: [{ filename: 'site-bar.css', content: SITE_BAR_CSS }],
    },
  };
}

// Swagger UI draws its bar after the page loads: once the bar's link is there, it leads home and says where.
const BACK_TO_SITE = `(function () {
  function home(link) {
    link.href = '/';
    link.removeAttribute('target');
    link.setAttribute('aria-label', 'OWASP community data: back to the site');
    if (!link.querySelector('.site-name')) {
      var name = document.createElement('span');
      name.className = 'site-name';
      name.textContent = 'OWASP community data';
      link.appendChild(name);
    }
  }
  new MutationObserver(function () {
    var link = document.querySelector('.topbar-wrapper a');
    if (link && link.getAttribute('href') !== '/') home(link);
    if (link && !link.querySelector('.site-name')) home(link);
  }).observe(document.documentElement, { childList: true, subtree: true });
})();
`;

const SITE_BAR_CSS = `.swagger-ui .topbar { background: #1b2430; }
.swagger-ui .topbar-wrapper a { display: flex; align-items: center; gap: 0.6rem; text-decoration: none; }
.swagger-ui .topbar-wrapper a img { height: 32px; }
.swagger-ui .topbar-wrapper .site-name { color: #ffffff; font-weight: 700; font-size: 1.1rem; }
`;
