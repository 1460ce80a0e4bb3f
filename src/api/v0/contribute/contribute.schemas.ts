import { Type } from '@sinclair/typebox';
import { DateTime } from '../common/schemas.ts';
import { ContributeSharedFilters, LabelFilter } from '../issues/issues.schemas.ts';
import { PROJECT_LEVELS } from '../projects/projects.schemas.ts';
import type { ProjectLevel } from '../../../db/schema.ts';
import { BEGINNER_LABELS } from './contribute.labels.ts';

export const ContributeProject = Type.Object(
  {
    key: Type.String({ description: 'Project key, without the `www-project-` prefix.' }),
    name: Type.String(),
    level: Type.Unsafe<ProjectLevel>(Type.String({ enum: [...PROJECT_LEVELS] })),
  },
  { title: 'ContributeProject' },
);

export const ContributeItem = Type.Object(
  {
    title: Type.String(),
    url: Type.String({ description: 'Address on GitHub.' }),
    repository: Type.String({ description: 'The repository, `owner/name`.' }),
    project: ContributeProject,
    labels: Type.Array(Type.String(), { description: "The issue's labels, by name." }),
    comments_count: Type.Integer(),
    created_at: DateTime(),
  },
  { title: 'ContributeIssue' },
);

export const ContributeFilters = Type.Object({
  ...ContributeSharedFilters,
  level: Type.Optional(
    Type.Unsafe<ProjectLevel>(
      Type.String({ enum: [...PROJECT_LEVELS], description: "The project's level, case-insensitive." }),
    ),
  ),
  label: LabelFilter('Only issues that also carry this label.'),
});

export const CONTRIBUTE_DESCRIPTION =
  'Where to help: open issues with no assignee that carry a label for newcomers (' +
  BEGINNER_LABELS.map((l) => `\`${l}\``).join(', ') +
  '; case, whitespace, hyphens and underscores ignored), in repositories of active projects that are not archived. ' +
  "Newest first, then by the project's rank (`project_rank`: docs/contribute.md). Each issue once, with the project " +
  'that names its repository (the best ranked one when several do).';
