import { resource } from '../common/resource.ts';
import { repositoryOf } from '../repositories/repositories.schemas.ts';
import { MilestoneDetail, MilestoneFilters, MilestoneItem, MilestoneParams } from './milestones.schemas.ts';
import { MILESTONE_ORDERING, getMilestone, listMilestones, exampleMilestone } from './milestones.queries.ts';

export const milestones = resource('milestones', 'Milestone', {
  description: 'Milestones mirrored from GitHub, optionally of one organization, one repository, one state.',
  list: { filters: MilestoneFilters, item: MilestoneItem, ordering: MILESTONE_ORDERING, query: listMilestones },
  detail: {
    example: exampleMilestone,
    params: MilestoneParams,
    response: MilestoneDetail,
    fetch: (db, params) => getMilestone(db, repositoryOf(params), params.milestone_id),
  },
});
