import { resource, type Resource } from '../common/resource.ts';
import { chapterGapsOperation } from './chapter-gaps.routes.ts';
import { keyedDump } from '../common/dumps.ts';
import { ChapterDetail, ChapterFilters, ChapterItem, ChapterParams, ChapterStored } from './chapters.schemas.ts';
import { CHAPTER_GROUPS, CHAPTER_ORDERING, getChapter, listChapters, exampleChapter } from './chapters.queries.ts';

const geo = { latitude: 'chapters.latitude', longitude: 'chapters.longitude', earth: 'chapters.earth' };

const declared = resource('chapters', 'Chapter', {
  description: 'Active chapters (with coordinates).',
  list: {
    filters: ChapterFilters,
    item: ChapterItem,
    ordering: CHAPTER_ORDERING,
    query: listChapters,
    geo,
    groups: CHAPTER_GROUPS,
  },
  detail: {
    example: exampleChapter,
    params: ChapterParams,
    response: ChapterDetail,
    fetch: (db, params) => getChapter(db, params.chapter_id),
    present: ({ id: _id, ...chapter }) => chapter,
  },
  dumps: [
    {
      ...keyedDump('chapters', ChapterDetail, 'chapter_id', (db) => listChapters(db, {}), 'chapter_id'),
      extra: ChapterStored,
    },
  ],
});

// GET /chapters/gaps/ beside the list and the detail (a static path: never a chapter's key).
export const chapters: Resource = { ...declared, operations: [...declared.operations, chapterGapsOperation] };
