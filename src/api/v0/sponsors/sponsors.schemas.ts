import { Type } from '@sinclair/typebox';
import { BooleanFilter, StringFilter } from '../common/schemas.ts';

const fields = {
  key: Type.String({ description: 'Sponsor key.' }),
  name: Type.String(),
  sponsor_type: Type.String({ description: 'Sponsorship level, for example a metal tier name.' }),
  is_member: Type.Boolean(),
  member_type: Type.String({ description: 'Membership type; empty when the sponsor is not a member.' }),
  url: Type.String({ description: 'Sponsor website.' }),
  image_url: Type.String({ description: 'Logo.' }),
};

// The interface's fields, then the two the reference's list items add.
export const SponsorItem = Type.Object(fields, { title: 'SponsorListItem' });

export const SponsorDetail = Type.Object(
  {
    key: fields.key,
    name: fields.name,
    sponsor_type: fields.sponsor_type,
    description: Type.String(),
    url: fields.url,
    image_url: fields.image_url,
    job_url: Type.String({ description: 'Careers page.' }),
    is_member: fields.is_member,
    member_type: fields.member_type,
  },
  { title: 'Sponsor' },
);

export const SponsorFilters = Type.Object({
  is_member: BooleanFilter('Only members (true) or only non-members (false).'),
  member_type: StringFilter('Member type, case-insensitive exact match.'),
  sponsor_type: StringFilter('Sponsor type, case-insensitive exact match.'),
});

export const SponsorParams = Type.Object({
  sponsor_id: Type.String({ maxLength: 200, description: 'The sponsor key, case-insensitive.' }),
});
