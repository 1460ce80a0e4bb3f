// Reads and validates the OWASP website's data files; no database work. Only chapters.json is
// required: a missing file leaves its kind of record untouched.
import { readEvents } from './owasp.events.ts';
import { loadList } from './owasp.files.ts';
import { readChapters, readCommittees, readProjects } from './owasp.groups.ts';
import { readLeaders } from './owasp.leaders.ts';
import { readSponsors } from './owasp.sponsors.ts';
import type { OwaspData } from './owasp.types.ts';

export async function readOwaspData(dir: string): Promise<OwaspData> {
  // One file after the other, so a folder with two broken files always reports the same one.
  const chapters = await loadList(dir, 'chapters.json', { required: true });
  const inactiveChapters = await loadList(dir, 'inactive_chapters.json');
  const committees = await loadList(dir, 'committees.json');
  const projects = await loadList(dir, 'projects.json');
  const projectLevels = await loadList(dir, 'project_levels.json');
  const events = await loadList(dir, 'events.yml');
  const sponsors = await loadList(dir, 'corp_members.yml');
  const leaders = await loadList(dir, 'leaders.json');
  return {
    chapters: readChapters(chapters ?? [], inactiveChapters),
    committees: committees && readCommittees(committees),
    projects: projects && readProjects(projects, projectLevels),
    events: events && readEvents(events),
    sponsors: sponsors && readSponsors(sponsors),
    leaders: leaders && readLeaders(leaders),
  };
}
