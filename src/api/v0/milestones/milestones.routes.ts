import { resource } from '../common/resource.ts';
import { inRepositoryDump } from '../common/dumps.ts';
import { repositoryOf } from '../repositories/repositories.schemas.ts';
import { MilestoneDetail, MilestoneFilters, MilestoneItem, MilestoneParams } from './milestones.schemas.ts';
import { milestoneRecords } from './milestones.queries.ts';

export const milestones = resource('milestones', 'Milestone', {
  description: 'Milestones mirrored from GitHub, optionally of one organization, one repository, one state.',
  list: {
    filters: MilestoneFilters,
    item: MilestoneItem,
    ordering: milestoneRecords.ordering,
    groups: milestoneRecords.groups,
    query: milestoneRecords.list,
  },
  detail: {
    example: milestoneRecords.example,
    params: MilestoneParams,
    response: MilestoneDetail,
    fetch: (db, params) => milestoneRecords.get(db, repositoryOf(params), params.milestone_id),
  },
  dumps: [
    inRepositoryDump('milestones', MilestoneDetail, 'milestone_id', 'number', (db) => milestoneRecords.list(db, {})),
  ],
});
