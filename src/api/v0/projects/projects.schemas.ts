import { Type } from '@sinclair/typebox';
import type { ProjectLevel, ProjectType } from '../../../db/schema.ts';
import { DateTime, LeaderRef, Nullable } from '../common/schemas.ts';
import { MAX_QUERY_LENGTH } from '../../../list-filter/filter.fields.ts';
import { searchDescription } from '../../../list-filter/filter.docs.ts';
import { Bucket } from './project-health.schemas.ts';

export const PROJECT_LEVELS: readonly ProjectLevel[] = ['flagship', 'production', 'lab', 'incubator', 'other'];

// A plain `enum` (not a union of literals) gives one validation error naming the allowed values,
// and lets the query normalization lower-case the parameter.
const Level = (description: string) =>
  Type.Unsafe<ProjectLevel>(Type.String({ enum: [...PROJECT_LEVELS], description }));

export const PROJECT_TYPES: readonly ProjectType[] = ['code', 'documentation', 'other', 'tool'];
const Kind = (description: string) => Type.Unsafe<ProjectType>(Type.String({ enum: [...PROJECT_TYPES], description }));

const Key = () => Type.String({ description: 'Project key, without the `www-project-` prefix.' });

export const ProjectItem = Type.Object(
  {
    key: Key(),
    name: Type.String(),
    level: Level('Project level.'),
    type: Kind("Project type (the reference's; a type the website data gives that is not one of these is `other`)."),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'ProjectListItem' },
);

export const ProjectDetail = Type.Object(
  {
    key: Key(),
    name: Type.String(),
    level: Level('Project level.'),
    type: Kind('Project type.'),
    description: Type.String(),
    leaders: Type.Array(LeaderRef),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { title: 'Project' },
);

export const ProjectFilters = Type.Object({
  level: Type.Optional(Level('Project level, case-insensitive.')),
  health_bucket: Type.Optional(
    Bucket('Health bucket (docs/health.md): `healthy`, `needs_attention` or `unhealthy`, case-insensitive.'),
  ),
  q: Type.Optional(Type.String({ maxLength: MAX_QUERY_LENGTH, description: searchDescription('projects') })),
  type: Type.Optional(
    Type.Array(Kind('Project type.'), {
      maxItems: 20,
      description: 'Project type, case-insensitive; repeat the parameter for several (`type=code&type=tool`: either).',
    }),
  ),
});

export const ProjectParams = Type.Object({
  project_id: Type.String({ maxLength: 200, description: 'The key, with or without the `www-project-` prefix.' }),
});

/**
 * What the dump carries besides the detail (common/dumps.ts): `q`'s `stars:` reads the project's repositories; `health`
 * is its stored health (null when none is computed yet), which `GET /projects/{key}/health`, `health_bucket`,
 * `ordering=health_score` and `group_by=health_bucket` read: a copy takes it as it is, since the dumps do not carry
 * every input of its computation (pull requests, push and close dates; docs/decisions.md).
 */
export const ProjectStored = Type.Object({
  repository_paths: Type.Array(Type.String()),
  health: Nullable(
    Type.Object({
      score: Type.Number(),
      bucket: Type.String(),
      coverage: Type.Number(),
      formula: Type.String(),
      computed_at: Type.String({ description: 'To the microsecond, UTC.' }),
      data_version: Type.Integer(),
      checks: Type.Array(Type.Unknown()),
      metrics: Type.Record(Type.String(), Type.Unknown()),
    }),
  ),
});
