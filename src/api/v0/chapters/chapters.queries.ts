import { sql } from 'kysely';
import type { Static } from '@sinclair/typebox';
import type { Db } from '../../../db/index.ts';
import { firstOf } from '../common/examples.queries.ts';
import type { OrderingSpec } from '../common/ordering.ts';
import type { GroupFields } from '../common/groups.ts';
import { stripPrefix } from '../common/id-prefix.ts';
import { listLeaders } from '../common/leaders.queries.ts';
import { parseSearch, SEARCH_FIELDS } from '../../../list-filter/filter.parser.ts';
import { applySearch, SEARCH_COLUMNS } from '../../../list-filter/filter.sql.ts';
import { countryCode } from '../../../geo/countries.ts';
import type { Condition } from '../../../list-filter/filter.fields.ts';
import { columnsOf } from '../common/schemas.ts';
import { ChapterItem, type ChapterFilters } from './chapters.schemas.ts';

// The interface: an active chapter has is_active true and both coordinates.
function activeChapters(db: Db) {
  return db
    .selectFrom('chapters')
    .where('is_active', '=', true)
    .where('latitude', 'is not', null)
    .where('longitude', 'is not', null);
}

/** The orderings of the list: public name → SQL column (listRoute orders and seeks by them). */
export const CHAPTER_ORDERING: OrderingSpec = {
  fields: { created_at: 'created_at', updated_at: 'updated_at', latitude: 'latitude', longitude: 'longitude' },
  default: '-created_at',
  tieBreaker: 'id',
};

/** `group_by`: the fields of the list's facets (groups.ts). */
export const CHAPTER_GROUPS: GroupFields = { country: 'chapters.country', region: 'chapters.region' };

export function listChapters(db: Db, query: Static<typeof ChapterFilters>) {
  let q = activeChapters(db).select(columnsOf('chapters', ChapterItem));
  if (query.country !== undefined) {
    // A country named by its ISO code, its name or a common spelling matches by code; other text by name.
    const code = countryCode(query.country);
    q = code ? q.where('country_code', '=', code) : q.where(sql`lower(country)`, '=', query.country.toLowerCase());
  }
  if (query.latitude_gte !== undefined) q = q.where('latitude', '>=', query.latitude_gte);
  if (query.latitude_lte !== undefined) q = q.where('latitude', '<=', query.latitude_lte);
  if (query.longitude_gte !== undefined) q = q.where('longitude', '>=', query.longitude_gte);
  if (query.longitude_lte !== undefined) q = q.where('longitude', '<=', query.longitude_lte);
  if (query.q !== undefined) {
    const conditions = parseSearch(query.q, SEARCH_FIELDS.chapters);
    const rest: Condition<'name' | 'country' | 'region'>[] = [];
    for (const condition of conditions) {
      const code = isCountryWord(condition) ? countryCode(condition.value) : undefined;
      if (code) q = q.where('country_code', '=', code);
      else rest.push(condition);
    }
    q = applySearch(q, rest, SEARCH_COLUMNS.chapters);
  }
  return q;
}

// `country:Turkey`, `country:TR`, `country:Türkiye` name one country; a quoted value stays an exact match.
function isCountryWord(condition: Condition): condition is Condition & { kind: 'string' } {
  return condition.kind === 'string' && condition.field === 'country' && !condition.exact;
}

export async function getChapter(db: Db, chapterId: string) {
  const chapter = await activeChapters(db)
    .select(['id', 'key', 'name', 'latitude', 'longitude', 'country', 'region', 'created_at', 'updated_at'])
    .where(sql`lower(key)`, '=', stripPrefix(chapterId, 'www-chapter-'))
    .executeTakeFirst();
  if (!chapter) return undefined;
  const leaders = await listLeaders(db, 'chapter_id', chapter.id);
  return { ...chapter, leaders };
}

/** The path parameters of one record the detail serves (the conformance test requests it). */
export async function exampleChapter(db: Db) {
  const value = await firstOf(db, 'chapters', 'key', { active: true, present: ['latitude'] });
  return value === undefined ? undefined : { chapter_id: value };
}
