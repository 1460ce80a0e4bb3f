import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { MemberDetail, MemberFilters, MemberItem, MemberParams } from './members.schemas.ts';
import { MEMBER_ORDERING, getMember, listMembers } from './members.queries.ts';

export async function memberRoutes(app: FastifyInstance): Promise<void> {
  listRoute(app, {
    path: '/members/',
    operationId: 'list_members',
    summary: 'List members',
    description: 'GitHub users mirrored by the service, once the GitHub sync has their profile.',
    tag: 'GitHub',
    filters: MemberFilters,
    item: MemberItem,
    itemName: 'Member',
    ordering: MEMBER_ORDERING,
    query: listMembers,
  });

  detailRoute(app, {
    path: '/members/:member_id',
    operationId: 'get_member',
    summary: 'Get member',
    tag: 'GitHub',
    params: MemberParams,
    response: MemberDetail,
    resource: 'Member',
    fetch: (db, params) => getMember(db, params.member_id),
    present: (row) => row,
  });
}
