import type { FastifyInstance } from 'fastify';
import { detailRoute, listRoute } from '../common/routes.ts';
import { MemberDetail, MemberFilters, MemberItem, MemberParams } from './members.schemas.ts';
import { getMember, listMembers } from './members.queries.ts';

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
    ordering: {
      fields: { created_at: 'members.created_at', updated_at: 'members.updated_at', login: 'members.login', name: 'members.name' },
      default: '-created_at',
      tieBreaker: 'members.id',
    },
    fetch: listMembers,
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
