import { resource } from '../common/resource.ts';
import { keyedDump } from '../common/dumps.ts';
import { CommitteeDetail, CommitteeFilters, CommitteeItem, CommitteeParams } from './committees.schemas.ts';
import { COMMITTEE_ORDERING, getCommittee, listCommittees, exampleCommittee } from './committees.queries.ts';

export const committees = resource('committees', 'Committee', {
  description: 'Active committees.',
  list: { filters: CommitteeFilters, item: CommitteeItem, ordering: COMMITTEE_ORDERING, query: listCommittees },
  detail: {
    example: exampleCommittee,
    params: CommitteeParams,
    response: CommitteeDetail,
    fetch: (db, params) => getCommittee(db, params.committee_id),
  },
  dumps: [keyedDump('committees', CommitteeDetail, 'committee_id', (db) => listCommittees(db, {}))],
});
