// GET /api/v0/search/?q=… (issue 26): ranked, typo-tolerant search across resources. Registered in the REST scope,
// so the key, the rate limit, the response cache, ETags and CORS are those of every other operation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { invalidParam } from '../../../errors.ts';
import { ERROR_RESPONSES, Query } from '../common/schemas.ts';
import { listDb } from '../common/routes.ts';
import { normalizeQuery } from '../common/query.ts';
import { MAX_RESULTS, SEARCH_RESOURCES, searchRecords } from './search.queries.ts';
import { highlight } from './search.highlight.ts';
import { linkBase } from '../../../http/link-base.ts';
import { csvCell, CSV_CONTENT_TYPE } from '../common/csv.ts';
import {
  formatParam,
  listMediaType,
  mediaSchemas,
  mediaTypesOf,
  NotAcceptableBody,
  setContentDisposition,
  CSV_TYPE,
} from '../common/formats.ts';
import type { Format } from '../../../http/negotiate.ts';

/** As the lists: JSON, or CSV (`format=csv`, `Accept: text/csv`), one row per result (issue 45). */
const SEARCH_FORMATS: Format[] = ['json', 'csv'];
const SEARCH_TYPES = mediaTypesOf(SEARCH_FORMATS);

export const SEARCH_PATH = '/search/';
export const SEARCH_OPERATION_ID = 'search';

const SearchQuery = Query({
  q: Type.String({
    maxLength: 200,
    description:
      'What to look for, as a person types it: words, part of a name, a word with a typo, any case and accents.',
  }),
  resource: Type.Optional(
    Type.String({
      maxLength: 200,
      description: `Only these resources, comma-separated: ${SEARCH_RESOURCES.join(', ')} (default: all).`,
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'Results per page.' })),
  page: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Page number (1-based); `cursor` is the same page, as `Link` gives it.' }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 40, description: 'Where a page starts, from the `Link` header.' })),
  format: formatParam(SEARCH_FORMATS),
});

const SearchItem = Type.Object(
  {
    resource: Type.String({ description: 'The resource: `projects`, `chapters`, `issues`, …', enum: SEARCH_RESOURCES }),
    id: Type.String({
      description: 'What follows `/api/v0/{resource}/` in its detail path: `juice-shop`, `OWASP/Nest/123`.',
    }),
    name: Type.String({ description: "The record's name (an issue's title)." }),
    score: Type.Number({ description: 'Relevance: higher is better; the items are in this order.' }),
    highlight: Type.String({
      description: 'The name, or a short snippet of the description, HTML-escaped, matched words in `<mark>…</mark>`.',
    }),
    url: Type.String({ description: 'Its API detail address.' }),
  },
  { title: 'SearchResult' },
);

const SearchBody = Type.Object(
  {
    items: Type.Array(SearchItem),
    count: Type.Integer({
      description: `Results found (at most 100 of a large table, 1,000 of a small one; ${MAX_RESULTS} can be paged through).`,
    }),
    total_count: Type.Integer({ description: 'Same as `count`.' }),
    current_page: Type.Integer(),
    total_pages: Type.Integer(),
    has_next: Type.Boolean(),
    has_previous: Type.Boolean(),
  },
  { title: 'PagedSearchResult' },
);

const CURSOR = /^o(\d{1,4})$/;

function resourcesOf(raw: string | undefined): string[] {
  if (raw === undefined) return SEARCH_RESOURCES;
  const names = raw
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const unknown = names.filter((name) => !SEARCH_RESOURCES.includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw invalidParam('query', 'resource', `must be one or more of: ${SEARCH_RESOURCES.join(', ')}`);
  return [...new Set(names)];
}

function offsetOf(query: Static<typeof SearchQuery>, limit: number): number {
  let offset = 0;
  if (query.cursor !== undefined) {
    const match = CURSOR.exec(query.cursor);
    if (!match) throw invalidParam('query', 'cursor', 'is not a cursor of this search (take it from the Link header)');
    offset = Number(match[1]);
  } else if (query.page !== undefined) offset = (query.page - 1) * limit;
  if (offset >= MAX_RESULTS)
    throw invalidParam(
      'query',
      query.cursor !== undefined ? 'cursor' : 'page',
      `is past the first ${MAX_RESULTS} results`,
    );
  return offset;
}

function setLinks(request: FastifyRequest, reply: FastifyReply, offset: number, limit: number, count: number): void {
  const [path, search = ''] = request.url.split('?') as [string, string?];
  const base = linkBase(request);
  const link = (start: number, rel: string) => {
    const params = new URLSearchParams(search);
    params.delete('page');
    params.delete('cursor');
    params.set('limit', String(limit));
    if (start > 0) params.set('cursor', `o${start}`);
    return `<${base}${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [link(0, 'first')];
  if (offset > 0) links.push(link(Math.max(0, offset - limit), 'prev'));
  if (offset + limit < count) links.push(link(offset + limit, 'next'));
  reply.header('link', links.join(', '));
}

export function searchRoute(app: FastifyInstance): void {
  app.get(
    SEARCH_PATH,
    {
      preValidation: normalizeQuery,
      schema: {
        operationId: SEARCH_OPERATION_ID,
        summary: 'Search every resource',
        description:
          'Ranked search across chapters, committees, events, projects, sponsors, members, organizations, repositories ' +
          'and issues: exact and prefix matches of the name first, then full-text relevance (name above description, ' +
          'English stemming, every word counted); a typo in a word of four letters or more is forgiven; case and ' +
          `accents are ignored. At most ${MAX_RESULTS} results can be paged through.`,
        tags: ['Search'],
        querystring: SearchQuery,
        response: { 200: SearchBody, 406: NotAcceptableBody, ...ERROR_RESPONSES },
      },
      config: {
        openapi: {
          kind: 'list',
          noun: 'SearchResult',
          media: mediaSchemas(SEARCH_FORMATS, Object.keys(SearchItem.properties)),
        },
        mediaTypes: SEARCH_TYPES,
      },
      onSend: setContentDisposition,
    },
    async (request, reply) => {
      const query = request.query as Static<typeof SearchQuery>;
      // Control characters (NUL included, which PostgreSQL text cannot hold) read as spaces.
      const text = query.q
        .replace(/\p{Cc}/gu, ' ')
        .replace(/\s+/g, ' ')
        .trim();
      if (text === '') throw invalidParam('query', 'q', 'must not be blank');
      const type = listMediaType(request, reply, SEARCH_TYPES);
      const resources = resourcesOf(query.resource);
      const limit = query.limit ?? 10;
      const offset = offsetOf(query, limit);
      const rows = await searchRecords(listDb(app), text, resources, limit, offset);
      const count = Math.min(rows[0]?.total ?? 0, MAX_RESULTS);
      setLinks(request, reply, offset, limit, count);
      const totalPages = Math.max(1, Math.ceil(count / limit));
      const items = rows.map((row) => ({
        resource: row.resource,
        id: row.id,
        name: row.name,
        score: row.score,
        highlight: highlight(row.name, row.text, text),
        url: `/api/v0/${row.resource}/${row.id.split('/').map(encodeURIComponent).join('/')}`,
      }));
      if (type === CSV_TYPE) {
        const names = Object.keys(SearchItem.properties) as (keyof (typeof items)[number])[];
        let csv = `${names.join(',')}\r\n`;
        for (const item of items) csv += `${names.map((name) => csvCell(item[name])).join(',')}\r\n`;
        return reply.type(CSV_CONTENT_TYPE).send(csv);
      }
      return {
        items,
        count,
        total_count: count,
        current_page: Math.floor(offset / limit) + 1,
        total_pages: totalPages,
        has_next: offset + limit < count,
        has_previous: offset > 0,
      };
    },
  );
}
