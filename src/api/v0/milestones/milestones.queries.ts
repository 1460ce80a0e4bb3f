import { repositoryRecords } from '../repositories/repository-records.queries.ts';
import { MilestoneDetail, MilestoneItem } from './milestones.schemas.ts';

/** The list (of a repository scope, by state; newest first) and the detail (by number in one repository). */
export const milestoneRecords = repositoryRecords('milestones', MilestoneItem, MilestoneDetail, {
  key: ['number', 'milestone_id'],
  equal: ['state'],
  group: ['state'],
  ordering: { by: ['created_at', 'updated_at'], default: '-created_at,-updated_at' },
});
