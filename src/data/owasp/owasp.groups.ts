// chapters.json, inactive_chapters.json, committees.json, projects.json (+ project_levels.json):
// one record per www-chapter-*, www-committee-*, www-project-* repository of the website.
import type { ProjectLevel, ProjectType } from '../../db/schema.ts';
import { recordLabel } from './owasp.files.ts';
import { RecordFields, keyFromUrl } from './owasp.fields.ts';
import type { ChapterRecord, CommitteeRecord, ProjectRecord } from './owasp.types.ts';

interface Page {
  fields: RecordFields;
  key: string;
  name: string;
  description: string;
  url: string;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

// The website's own rule: a repository whose GitHub Pages build is "no pages" has no page on
// owasp.org and is not listed (351 active chapters in the bundled file).
function isBuilt(build: string): boolean {
  return build.toLowerCase() !== 'no pages';
}

function readPage(file: string, prefix: string, raw: unknown, index: number): Page {
  const fields = new RecordFields(file, recordLabel(index, raw, 'title', 'name', 'url'), raw);
  const url = fields.required('url');
  const key = keyFromUrl(url, prefix) ?? fields.fail(`url is not a ${prefix}… page of owasp.org: "${url}"`);
  // Some titles are the repository name or a template title: the name field reads better then.
  const title = fields.text('title');
  const name = (title && !title.toLowerCase().startsWith('www-') ? title : fields.text('name')) || key;
  return {
    fields,
    key,
    name,
    description: fields.text('pitch'),
    url,
    isActive: isBuilt(fields.required('build')),
    createdAt: fields.timestamp('created'),
    updatedAt: fields.timestamp('updated'),
  };
}

function uniquePages(file: string, prefix: string, list: unknown[]): Page[] {
  const seen = new Map<string, string>();
  return list.map((raw, index) => {
    const page = readPage(file, prefix, raw, index);
    const earlier = seen.get(page.key);
    if (earlier) page.fields.fail(`same key "${page.key}" as record ${earlier}`);
    seen.set(page.key, page.fields.record);
    return page;
  });
}

/** Chapters of chapters.json, then those only listed in inactive_chapters.json (as inactive). */
export function readChapters(active: unknown[], inactive: unknown[] = []): ChapterRecord[] {
  const chapters = uniquePages('chapters.json', 'www-chapter-', active).map(toChapter);
  const known = new Set(chapters.map((chapter) => chapter.key));
  // The inactive file also lists projects, committees and events: only its chapters count.
  const formerOnly = inactive.filter((raw) => {
    const url = (raw as { url?: unknown } | null)?.url;
    return typeof url === 'string' && /\/www-chapter-/i.test(url);
  });
  for (const page of uniquePages('inactive_chapters.json', 'www-chapter-', formerOnly)) {
    if (!known.has(page.key)) chapters.push({ ...toChapter(page), isActive: false });
  }
  return chapters;
}

function toChapter(page: Page): ChapterRecord {
  const { fields } = page;
  const level = fields.text('level');
  const meetupGroup = meetupSlug(fields.string('meetup-group'));
  // codeurl sometimes holds several URLs separated by tabs, often the same one twice.
  const codeUrls = fields
    .string('codeurl')
    .split(/\s+/)
    .filter((url) => /^https?:\/\//.test(url));
  return {
    key: page.key,
    name: page.name,
    description: page.description,
    url: page.url,
    country: fields.text('country'),
    region: fields.text('region'),
    level: level === '-1' ? '' : level,
    meetupGroup,
    relatedUrls: [...new Set([...codeUrls, meetupUrl(meetupGroup)].filter(Boolean))],
    isActive: page.isActive,
    createdAt: page.createdAt,
    updatedAt: page.updatedAt,
    placeNames: [...new Set([fields.string('title'), fields.string('name')].map(placeName).filter(Boolean))],
  };
}

/** "OWASP IIT Patna - Student Chapter" → "IIT Patna". */
function placeName(text: string): string {
  // Older records are named after their repository (www-chapter-jeddah): no place name there.
  if (/^www-/i.test(text)) return '';
  return text
    .replace(/®/g, '')
    .replace(/\bOWASP\b|\b(student\s+)?chapter\b/gi, ' ')
    .replace(/[\s-]+$/, '')
    .trim();
}

// Leaders type the group's slug, its meetup address or its display name.
function meetupSlug(text: string): string {
  const url = /^(?:https?:\/\/(?:www\.)?meetup\.com)?\/?([^/\s]+)\/?$/i.exec(text);
  return url ? url[1]! : text;
}

/** Only a slug makes a meetup URL; another address given instead is kept as it is. */
function meetupUrl(group: string): string {
  if (/^[\w.-]+$/.test(group)) return `https://www.meetup.com/${group}/`;
  return /^https?:\/\/\S+$/.test(group) ? group : '';
}

export function readCommittees(list: unknown[]): CommitteeRecord[] {
  return uniquePages('committees.json', 'www-committee-', list).map(({ fields: _fields, ...committee }) => committee);
}

/** projects.json, with the level the foundation assigned in project_levels.json where there is one. */
export function readProjects(list: unknown[], levels: unknown[] = []): ProjectRecord[] {
  const assigned = new Map<string, number | undefined>();
  levels.forEach((raw, index) => {
    const fields = new RecordFields('project_levels.json', recordLabel(index, raw, 'name', 'repo'), raw);
    const repo = fields.required('repo').toLowerCase();
    // A repository listed twice keeps its last level: later lines are the newer edits.
    assigned.set(repo.startsWith('www-project-') ? repo : `www-project-${repo}`, fields.number('level'));
  });
  return uniquePages('projects.json', 'www-project-', list).map(({ fields, ...page }) => {
    // projects.json's own level is only a fallback, and may hold template junk (then "other").
    const level = assigned.get(`www-project-${page.key}`) ?? Number(fields.text('level'));
    return {
      ...page,
      level: projectLevel(level),
      type: projectType(fields.text('type')),
      repositoryPaths: repositoryPaths(page.key, fields.string('codeurl')),
    };
  });
}

const PROJECT_TYPES: readonly ProjectType[] = ['code', 'documentation', 'other', 'tool'];

// The reference keeps a type it knows and files anything else ("code, tool", "standards", blank) as other.
export function projectType(text: string): ProjectType {
  const type = text.trim().toLowerCase();
  return (PROJECT_TYPES as readonly string[]).includes(type) ? (type as ProjectType) : 'other';
}

// A project's repositories, as the reference gathers them: its website repository, and the GitHub
// repositories its code URLs name (the field may hold several, separated by blanks).
function repositoryPaths(key: string, codeUrls: string): string[] {
  const named = codeUrls
    .split(/\s+/)
    .map((url) => /^https?:\/\/(?:www\.)?github\.com\/([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?(?:[?#].*)?$/i.exec(url))
    .flatMap((match) => (match ? [`${match[1]}/${match[2]}`.toLowerCase()] : []));
  return [...new Set([`owasp/www-project-${key}`.toLowerCase(), ...named])];
}

// project_levels.json numbers the levels: 4 flagship, 3.5 production, 3 lab, 2 incubator; -1, 0 and
// 1 (unrated) are "other".
export function projectLevel(level: number | undefined): ProjectLevel {
  if (level === 4) return 'flagship';
  if (level === 3.5) return 'production';
  if (level === 3) return 'lab';
  if (level === 2) return 'incubator';
  return 'other';
}
