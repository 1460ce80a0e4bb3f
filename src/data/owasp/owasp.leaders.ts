// leaders.json: one entry per leader and group. Only the name and the group are read: the e-mail
// address is personal data the service never stores or publishes. Some entries give a GitHub profile
// address in the e-mail field instead; that public login is kept.
import { recordLabel } from './owasp.files.ts';
import { RecordFields, keyFromUrl, slugify } from './owasp.fields.ts';
import type { LeaderGroup, LeaderLink, LeaderRecord, LeaderSkips } from './owasp.types.ts';

const GROUP_PREFIXES: ReadonlyArray<[LeaderGroup, string]> = [
  ['chapter', 'www-chapter-'],
  ['committee', 'www-committee-'],
  ['project', 'www-project-'],
];

export interface Leaders {
  leaders: LeaderRecord[];
  links: LeaderLink[];
  skipped: LeaderSkips;
}

export function readLeaders(list: unknown[]): Leaders {
  const leaders = new Map<string, LeaderRecord>();
  const links: LeaderLink[] = [];
  const linked = new Set<string>();
  const groupSizes = new Map<string, number>();
  const skipped: LeaderSkips = { otherGroups: 0, withoutName: 0, duplicates: 0, unknownGroups: 0 };

  list.forEach((raw, index) => {
    const fields = new RecordFields('leaders.json', recordLabel(index, raw, 'name', 'group'), raw);
    const groupUrl = fields.required('group_url');
    const group = GROUP_PREFIXES.map(([kind, prefix]) => ({ kind, key: keyFromUrl(groupUrl, prefix) })).find(
      (g) => g.key,
    );
    // Names sometimes carry a mail emoji where the site shows a mail link.
    const name = fields
      .string('name')
      .replace(/\p{Extended_Pictographic}/gu, '')
      .trim();
    const key = slugify(name);
    if (!group?.key) {
      skipped.otherGroups++;
      return;
    }
    if (!key) {
      skipped.withoutName++;
      return;
    }
    const groupId = `${group.kind}:${group.key}`;
    if (linked.has(`${groupId}:${key}`)) {
      skipped.duplicates++;
      return;
    }
    linked.add(`${groupId}:${key}`);
    // The same person spelled with other capitals elsewhere is one leader, named as first seen.
    const githubLogin = githubLoginOf(fields.string('email'));
    const known = leaders.get(key);
    if (!known) leaders.set(key, { key, name, githubLogin });
    else if (!known.githubLogin) known.githubLogin = githubLogin;
    const position = groupSizes.get(groupId) ?? 0;
    groupSizes.set(groupId, position + 1);
    links.push({ leaderKey: key, group: group.kind, groupKey: group.key, position });
  });
  return { leaders: [...leaders.values()], links, skipped };
}

/** `https://github.com/login` → `login`; anything else (an e-mail address above all) → ''. */
function githubLoginOf(text: string): string {
  return /^https?:\/\/(?:www\.)?github\.com\/([a-z\d](?:[a-z\d-]{0,38}))\/?$/i.exec(text)?.[1] ?? '';
}
