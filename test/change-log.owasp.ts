// Upstream edits of the OWASP website's files for the change log's tests (test/change-log.test.ts): a copy of the
// bundled files, changed as the website changes them.
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../src/db/index.ts';

type Json = Record<string, unknown>;

const readJson = async (dir: string, file: string) =>
  JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as Json[];
const writeJson = (dir: string, file: string, value: unknown) =>
  fs.writeFile(path.join(dir, file), JSON.stringify(value));
const keyOf = (record: Json) => /www-(?:chapter|committee|project)-([^/]+)\//.exec(String(record.url))?.[1] ?? '';

const month = (date: Date) => date.toISOString().slice(0, 7);

/**
 * A published chapter that is the only record its month's snapshot counts: deactivated, it takes the snapshot with it.
 */
export async function loneChapter(db: Db): Promise<string> {
  const { rows } = await sql<{ key: string }>`
    SELECT c.key FROM chapters c JOIN snapshots s ON s.key = to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM')
    WHERE c.is_active AND c.latitude IS NOT NULL AND c.longitude IS NOT NULL AND s.new_chapters_count = 1
      AND s.new_issues_count + s.new_projects_count + s.new_releases_count + s.new_users_count = 0
    ORDER BY c.key LIMIT 1`.execute(db);
  if (!rows[0]) throw new Error('no chapter alone in its month: pick another way to delete a snapshot');
  return rows[0].key;
}

/** The latest snapshot's month, and the last complete month before `now` without one. */
async function months(db: Db, now: Date): Promise<{ latest: string; free: string }> {
  const { rows } = await sql<{ key: string }>`SELECT key FROM snapshots ORDER BY key`.execute(db);
  const keys = new Set(rows.map((row) => row.key));
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  while (keys.has(month(at))) at.setUTCMonth(at.getUTCMonth() - 1);
  return { latest: rows.at(-1)!.key, free: month(at) };
}

/**
 * Every kind of change the website makes: London renamed Manchester (placed again), a chapter alone in its month
 * gone, two chapters founded (one in the latest snapshot's month, one in a month without a snapshot); a committee and
 * a project renamed, one of each gone and one new; an event moved and one announced; a sponsor's description edited
 * and a sponsor new.
 */
export async function editOwasp(db: Db, dir: string, now: Date): Promise<void> {
  const lone = await loneChapter(db);
  const { latest, free } = await months(db, now);
  const chapters = await readJson(dir, 'chapters.json');
  const london = chapters.find((c) => keyOf(c) === 'london')!;
  const founded = (name: string, country: string, created: string) => ({
    ...london,
    name,
    title: `OWASP ${name}`,
    url: `https://owasp.org/www-chapter-${name.toLowerCase()}/`,
    country,
    region: 'Europe',
    created,
    updated: created,
  });
  await writeJson(dir, 'chapters.json', [
    ...chapters
      .filter((c) => keyOf(c) !== lone)
      .map((c) => (c === london ? { ...c, name: 'Manchester', title: 'OWASP Manchester' } : c)),
    founded('Tartu', 'Estonia', `${latest}-15`),
    founded('Gdynia', 'Poland', `${free}-15`),
  ]);
  for (const kind of ['committee', 'project'] as const) {
    const file = `${kind === 'committee' ? 'committees' : 'projects'}.json`;
    const { rows } = await sql<{
      key: string;
    }>`SELECT key FROM ${sql.table(`${kind}s`)} WHERE is_active ORDER BY key LIMIT 2`.execute(db);
    const [renamed, gone] = rows.map((row) => row.key);
    const records = await readJson(dir, file);
    const template = records.find((r) => keyOf(r) === renamed)!;
    await writeJson(dir, file, [
      ...records
        .filter((r) => keyOf(r) !== gone)
        .map((r) => (r === template ? { ...r, title: `${String(r.title)} (renamed)` } : r)),
      { ...template, url: `https://owasp.org/www-${kind}-change-log/`, title: `OWASP Change Log ${kind}` },
    ]);
  }
  const events = await fs.readFile(path.join(dir, 'events.yml'), 'utf8');
  const announced =
    '    - name: OWASP Change Days 2031 - Tartu, Estonia\n      start-date: 2031-05-02\n      dates: May 2-3, 2031\n';
  const moved = events
    .replace(
      'start-date: 2026-06-22\n      dates: June 22-26, 2026',
      'start-date: 2026-06-23\n      dates: June 23-27, 2026',
    )
    .replace(/(\n {2}events:\n)/, `$1${announced}`);
  if (moved === events) throw new Error('events.yml: nothing edited');
  await fs.writeFile(path.join(dir, 'events.yml'), moved);
  const sponsors = await fs.readFile(path.join(dir, 'corp_members.yml'), 'utf8');
  const edited = sponsors.replace('description: Trent AI. Securing', 'description: Trent AI (edited). Securing');
  if (edited === sponsors) throw new Error('corp_members.yml: nothing edited');
  await fs.writeFile(
    path.join(dir, 'corp_members.yml'),
    `${edited.trimEnd()}\n- member: true\n  sponsor: 5\n  name: Change Log Inc\n  sortname: Change Log Inc\n` +
      '  membertype: 4\n  image: /assets/images/corp-member-logo/change-log.png\n  url: https://changelog.example\n' +
      '  description: Follows every change.\n',
  );
}

/** An edit of a chapter the API does not show (its meetup group): its row is written, no field a client sees. */
export async function hideFromApi(dir: string): Promise<string> {
  const chapters = await readJson(dir, 'chapters.json');
  const chapter = chapters.find((c) => keyOf(c) === 'manchester' || keyOf(c) === 'london')!;
  chapter['meetup-group'] = 'owasp-change-log-meetup';
  await writeJson(dir, 'chapters.json', chapters);
  return keyOf(chapter);
}
