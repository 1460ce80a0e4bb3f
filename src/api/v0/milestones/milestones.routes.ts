import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { MilestoneDetail, MilestoneFilters, MilestoneItem, MilestoneParams } from './milestones.schemas.ts';
import { MILESTONE_ORDERING, getMilestone, listMilestones } from './milestones.queries.ts';

export async function milestoneRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/milestones/',
    operationId: 'list_milestones',
    summary: 'List milestones',
    description: 'Milestones mirrored from GitHub, optionally of one organization, one repository, one state.',
    tag: 'GitHub',
    filters: MilestoneFilters,
    item: MilestoneItem,
    itemName: 'Milestone',
    ordering: MILESTONE_ORDERING,
    query: listMilestones,
  });

  detailRoute(app, {
    path: '/milestones/:organization_id/:repository_id/:milestone_id',
    operationId: 'get_milestone',
    summary: 'Get milestone',
    tag: 'GitHub',
    params: MilestoneParams,
    response: MilestoneDetail,
    resource: 'Milestone',
    fetch: (db, params) =>
      getMilestone(db, { organization: params.organization_id, repository: params.repository_id }, params.milestone_id),
    present: (row) => row,
  });
}
