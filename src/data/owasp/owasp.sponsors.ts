// corp_members.yml: corporate members and sponsors (hand-edited; values often carry stray tabs).
import { recordLabel } from './owasp.files.ts';
import { RecordFields, slugify } from './owasp.fields.ts';
import type { SponsorRecord } from './owasp.types.ts';

// The file's own legend: sponsor 1 Diamond … 5 Supporter, -1 (or absent) not a sponsor. The last
// value is OWASP Nest's, so clients filtering on it keep working.
const SPONSOR_TYPES: Record<string, string> = {
  '1': 'Diamond',
  '2': 'Platinum',
  '3': 'Gold',
  '4': 'Silver',
  '5': 'Supporter',
};
export const NOT_A_SPONSOR = 'Not a Sponsor';

// membertype: 2 Platinum, 3 Gold, 4 or absent Silver; only meaningful for members.
const MEMBER_TYPES: Record<string, string> = { '2': 'Platinum', '3': 'Gold', '4': 'Silver' };

export function readSponsors(list: unknown[]): SponsorRecord[] {
  const sponsors = new Map<string, SponsorRecord>();
  list.forEach((raw, index) => {
    const fields = new RecordFields('corp_members.yml', recordLabel(index, raw, 'name'), raw);
    const name = fields.required('name');
    const key = slugify(name) || fields.fail(`name "${name}" has no letters or digits`);
    // "sponosr" is a typo in three records; the intent is plain.
    const sponsor = fields.string('sponsor') || fields.string('sponosr');
    const isMember = fields.boolean('member');
    const record: SponsorRecord = {
      key,
      name,
      sortName: fields.string('sortname'),
      sponsorType: SPONSOR_TYPES[sponsor] ?? NOT_A_SPONSOR,
      description: fields.text('description'),
      url: fields.string('url'),
      imageUrl: absoluteUrl(fields.string('image')),
      jobUrl: fields.string('job_url'),
      isMember,
      memberType: isMember ? (MEMBER_TYPES[fields.string('membertype')] ?? 'Silver') : '',
    };
    // A company listed twice keeps its first entry (one row per key).
    if (!sponsors.has(key)) sponsors.set(key, record);
  });
  return [...sponsors.values()];
}

/** Logos are site paths (`/assets/…`): made absolute so clients can load them. */
function absoluteUrl(path: string): string {
  return path.startsWith('/') ? `https://owasp.org${path}` : path;
}
