import { Type } from '@sinclair/typebox';
import { DateTime } from '../common/schemas.ts';

export const DumpItem = Type.Object(
  {
    resource: Type.String({ description: 'The resource: `chapters`, `issues`, …, `snapshot-releases`, `deleted`.' }),
    url: Type.String({ description: 'Where to download it: `/api/v0/dumps/<resource>.ndjson.gz`.' }),
    records: Type.Integer({ description: 'Lines of the file: one record each.' }),
    bytes: Type.Integer({ description: 'Size of the gzipped file.' }),
    sha256: Type.String({ description: 'SHA-256 of the gzipped file, hexadecimal (also its `ETag`).' }),
    extra_fields: Type.Array(Type.String(), {
      description:
        "The fields of each line's `extra`: stored fields the detail leaves out that a filter, the search, an " +
        'ordering or a `group_by` reads (`category` of events, `language` of repositories), so that a copy ' +
        'seeded from the dumps answers those alike. Empty when the lines carry none.',
    }),
    data_version: Type.Integer({ description: 'The data version the file holds the records of.' }),
    created_at: DateTime('When the file was written.'),
  },
  { title: 'Dump' },
);

/** Seconds a client waits before asking again while the first dumps are built (`Retry-After`). */
export const BUILDING_RETRY_AFTER_S = 5;

export const DumpManifest = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('building'), Type.Literal('disabled')], {
      description:
        '`ready`: `items` names the files. `building`: none yet, the first build is under way (the answer carries ' +
        '`Retry-After`). `disabled`: this instance builds no dumps; `setting` names what the operator sets.',
    }),
    setting: Type.Optional(
      Type.String({ description: 'With `disabled`: the setting that gives dumps (`DUMPS_DIR`, a folder).' }),
    ),
    message: Type.Optional(
      Type.String({ description: 'With `building` or `disabled`: what it means, in a sentence.' }),
    ),
    format: Type.Optional(
      Type.Integer({
        description:
          'How the lines are written: 2 since they carry `extra` (`cds import --from-dumps` refuses older dumps). ' +
          'Absent while there are no files.',
      }),
    ),
    last_change_id: Type.Integer({
      description:
        'The last change (`GET /api/v0/changes/`) the files include: load them, then follow the changes after this ' +
        'id (docs/changes.md). 0 until the first build.',
    }),
    items: Type.Array(DumpItem),
  },
  { title: 'DumpManifest' },
);

export const DumpParams = Type.Object({
  file: Type.String({ maxLength: 100, description: '`<resource>.ndjson.gz`' }),
});
