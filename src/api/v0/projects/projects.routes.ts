import { resource } from '../common/resource.ts';
import { keyedDump } from '../common/dumps.ts';
import { ProjectDetail, ProjectFilters, ProjectItem, ProjectParams, ProjectStored } from './projects.schemas.ts';
import { PROJECT_GROUPS, PROJECT_ORDERING, getProject, listProjects, exampleProject } from './projects.queries.ts';

export const projects = resource('projects', 'Project', {
  description: 'Active projects.',
  list: {
    filters: ProjectFilters,
    item: ProjectItem,
    ordering: PROJECT_ORDERING,
    groups: PROJECT_GROUPS,
    query: listProjects,
  },
  detail: {
    example: exampleProject,
    params: ProjectParams,
    response: ProjectDetail,
    fetch: (db, params) => getProject(db, params.project_id),
    present: ({ id: _id, ...project }) => project,
  },
  dumps: [
    {
      ...keyedDump('projects', ProjectDetail, 'project_id', (db) => listProjects(db, {}), 'project_id'),
      extra: ProjectStored,
    },
  ],
});
