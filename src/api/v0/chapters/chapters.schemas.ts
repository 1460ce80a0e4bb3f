import { Type } from '@sinclair/typebox';
import { DateTime, LeaderRef, Nullable, StringFilter, Latitude, Longitude } from '../common/schemas.ts';
import { MAX_QUERY_LENGTH } from '../../../list-filter/filter.fields.ts';
import { searchDescription } from '../../../list-filter/filter.docs.ts';

export const ChapterItem = Type.Object(
  {
    key: Type.String({ description: 'Chapter key, without the `www-chapter-` prefix.' }),
    name: Type.String(),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'ChapterListItem' },
);

export const ChapterDetail = Type.Object(
  {
    key: Type.String({ description: 'Chapter key, without the `www-chapter-` prefix.' }),
    name: Type.String(),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    country: Type.String(),
    region: Type.String(),
    leaders: Type.Array(LeaderRef),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'Chapter' },
);

export const ChapterFilters = Type.Object({
  country: StringFilter(
    'Country: an ISO 3166-1 alpha-2 code in any case (`TR`), its English name or a common spelling, accents ignored ' +
      '(`Türkiye`, `Turkiye`, `Turkey`; `USA`; `UK`, `Scotland` for the United Kingdom): matches the chapters of that ' +
      'country. Any other text matches the stored country name exactly, ignoring case.',
  ),
  latitude_gte: Latitude('Minimum latitude.'),
  latitude_lte: Latitude('Maximum latitude.'),
  longitude_gte: Longitude('Minimum longitude.'),
  longitude_lte: Longitude('Maximum longitude.'),
  q: Type.Optional(Type.String({ maxLength: MAX_QUERY_LENGTH, description: searchDescription('chapters') })),
});

export const ChapterParams = Type.Object({
  chapter_id: Type.String({ maxLength: 200, description: 'The key, with or without the `www-chapter-` prefix.' }),
});

/** What the dump carries besides the detail (common/dumps.ts): the search reads the description. */
export const ChapterStored = Type.Object({ description: Type.String() });
