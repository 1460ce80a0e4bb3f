import { Type } from '@sinclair/typebox';
import { DateTime, StringFilter } from '../common/schemas.ts';

// GitHub's dates of the account. Members whose profile the GitHub sync has not fetched yet have none
// and are not published (docs/decisions.md), so these are never null.
const Dates = {
  created_at: DateTime(),
  updated_at: DateTime(),
};

export const MemberItem = Type.Object(
  {
    login: Type.String({ description: 'GitHub username.' }),
    name: Type.String({ description: 'Display name.' }),
    avatar_url: Type.String(),
    url: Type.String({ description: 'Profile address.' }),
    ...Dates,
  },
  { title: 'MemberListItem' },
);

export const MemberDetail = Type.Object(
  {
    login: Type.String({ description: 'GitHub username.' }),
    name: Type.String({ description: 'Display name.' }),
    avatar_url: Type.String(),
    url: Type.String({ description: 'Profile address.' }),
    bio: Type.String(),
    company: Type.String(),
    location: Type.String(),
    title: Type.String({ description: 'Job title.' }),
    twitter_username: Type.String(),
    followers_count: Type.Integer(),
    following_count: Type.Integer(),
    public_repositories_count: Type.Integer(),
    ...Dates,
  },
  { title: 'Member' },
);

export const MemberFilters = Type.Object({
  company: StringFilter('Company, case-insensitive exact match.'),
  location: StringFilter('Location, case-insensitive exact match.'),
});

export const MemberParams = Type.Object({
  member_id: Type.String({ maxLength: 200, description: 'Member login, case-insensitive.' }),
});
