import { resource } from '../common/resource.ts';
import { loginDump } from '../common/dumps.ts';
import { MemberDetail, MemberFilters, MemberItem, MemberParams } from './members.schemas.ts';
import { MEMBER_GROUPS, MEMBER_ORDERING, getMember, listMembers, exampleMember } from './members.queries.ts';

export const members = resource('members', 'Member', {
  description: 'GitHub users mirrored by the service, once the GitHub sync has their profile.',
  list: {
    filters: MemberFilters,
    item: MemberItem,
    ordering: MEMBER_ORDERING,
    groups: MEMBER_GROUPS,
    query: listMembers,
  },
  detail: {
    example: exampleMember,
    params: MemberParams,
    response: MemberDetail,
    fetch: (db, params) => getMember(db, params.member_id),
  },
  dumps: [loginDump('members', MemberDetail, 'member_id', (db) => listMembers(db, {}))],
});
