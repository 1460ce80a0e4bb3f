import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { ChapterDetail, ChapterFilters, ChapterItem, ChapterParams } from './chapters.schemas.ts';
import { CHAPTER_ORDERING, getChapter, listChapters } from './chapters.queries.ts';

export async function chapterRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/chapters/',
    operationId: 'list_chapters',
    summary: 'List chapters',
    description: 'Active chapters (with coordinates).',
    tag: 'Community',
    filters: ChapterFilters,
    item: ChapterItem,
    itemName: 'Chapter',
    ordering: CHAPTER_ORDERING,
    geo: { latitude: 'chapters.latitude', longitude: 'chapters.longitude' },
    query: listChapters,
  });

  detailRoute(app, {
    path: '/chapters/:chapter_id',
    operationId: 'get_chapter',
    summary: 'Get chapter',
    tag: 'Community',
    params: ChapterParams,
    response: ChapterDetail,
    resource: 'Chapter',
    fetch: (db, params) => getChapter(db, params.chapter_id),
    present: ({ id: _id, ...chapter }) => chapter,
  });
}
