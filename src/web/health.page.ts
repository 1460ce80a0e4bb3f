// GET /health: every active project by health score with its bucket, level filters and a search (a plain GET form:
// the page needs no script); the selected project's checks (value against threshold) and its score over time, drawn
// as inline SVG; beside them, the large cities without a chapter. Everything from the page's daily document
// (health.data.ts).
import { escapeHtml } from '../text.ts';
import { PROJECT_LEVELS } from '../api/v0/projects/projects.schemas.ts';
import { layout } from './layout.ts';
import type { HealthCheckView, HealthDocument, ProjectHealthView } from './health.data.ts';

export interface HealthQuery {
  level?: string;
  q?: string;
  project?: string;
}

const BUCKET_LABEL: Record<string, string> = {
  healthy: 'Healthy',
  needs_attention: 'Needs attention',
  unhealthy: 'Unhealthy',
};

const e = (value: unknown) => escapeHtml(String(value));
const score = (value: number | null) => (value === null ? '–' : value.toFixed(1));

function bucketBadge(bucket: string | null): string {
  if (bucket === null) return '<span class="bucket bucket-none">Not scored</span>';
  return `<span class="bucket bucket-${e(bucket)}">${e(BUCKET_LABEL[bucket] ?? bucket)}</span>`;
}

/** A score as a bar of 100 units: an SVG, so that no inline style is needed (the CSP forbids it). */
function scoreBar(value: number | null): string {
  const width = value === null ? 0 : Math.max(0, Math.min(100, value));
  return `<svg class="score-bar" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true" focusable="false"><rect class="score-track" width="100" height="8" rx="2"></rect><rect class="score-fill" width="${width.toFixed(1)}" height="8" rx="2"></rect></svg>`;
}

function matches(project: ProjectHealthView, query: HealthQuery): boolean {
  if (query.level && project.level !== query.level) return false;
  const words = query.q?.trim().toLowerCase();
  return !words || project.key.toLowerCase().includes(words) || project.name.toLowerCase().includes(words);
}

function link(query: HealthQuery, project?: string): string {
  const params = new URLSearchParams();
  if (query.level) params.set('level', query.level);
  if (query.q) params.set('q', query.q);
  if (project) params.set('project', project);
  const text = params.toString();
  return `/health${text ? `?${text}` : ''}`;
}

function filters(query: HealthQuery): string {
  const options = ['', ...PROJECT_LEVELS]
    .map((level) => {
      const label = level === '' ? 'All levels' : level.charAt(0).toUpperCase() + level.slice(1);
      return `<option value="${level}"${query.level === level || (!query.level && level === '') ? ' selected' : ''}>${label}</option>`;
    })
    .join('');
  return `<form class="map-filters health-filters" method="get" action="/health" role="search" aria-label="Filter the projects">
  <div class="field"><label for="health-level">Level</label><select id="health-level" name="level">${options}</select></div>
  <div class="field"><label for="health-q">Search</label><input id="health-q" name="q" type="search" maxlength="100" value="${e(query.q ?? '')}" placeholder="Name or key"></div>
  <div class="field"><button type="submit" class="button">Show</button></div>
</form>`;
}

function projectRows(projects: ProjectHealthView[], query: HealthQuery): string {
  if (projects.length === 0) return '<tr><td colspan="4">No project matches.</td></tr>';
  return projects
    .map(
      (p, i) => `<tr${p.key.toLowerCase() === query.project ? ' aria-current="true" class="selected"' : ''}>
  <td class="rank">${i + 1}</td>
  <th scope="row"><a href="${e(link(query, p.key))}#project-detail">${e(p.name)}</a> <span class="muted project-key">${e(p.key)}</span></th>
  <td>${e(p.level)}</td>
  <td class="score"><span class="score-value">${score(p.score)}</span>${scoreBar(p.score)} ${bucketBadge(p.bucket)}</td>
</tr>`,
    )
    .join('\n');
}

const label = (name: string) => name.replace(/_/g, ' ');

function value(v: number | boolean | null): string {
  if (v === null) return 'unknown';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

function checkRows(checks: HealthCheckView[]): string {
  return checks
    .map((c) => {
      const verdict = c.pass === null ? 'unknown' : c.pass ? 'pass' : 'fail';
      const word = c.pass === null ? 'Unknown' : c.pass ? 'Pass' : 'Fail';
      const bound = c.direction === 'at_most' ? '≤' : '≥';
      const window = c.window_days !== undefined ? ` in ${c.window_days} days` : '';
      return `<tr class="check-${verdict}"><th scope="row">${e(label(c.name))}</th><td><span class="verdict verdict-${verdict}">${word}</span></td><td>${e(value(c.value))}</td><td>${bound} ${e(value(c.threshold))}${window}</td><td>${c.weight}</td></tr>`;
    })
    .join('\n');
}

/** The score over time: a line over the days of the history, the bucket bounds (50, 75) as guides. */
export function historyChart(points: { day: string; score: number }[]): string {
  if (points.length === 0)
    return '<p class="hint">No history yet: a point is kept each day an import or a sync runs.</p>';
  const width = 600;
  const height = 200;
  const pad = { left: 36, right: 12, top: 10, bottom: 28 };
  const innerWidth = width - pad.left - pad.right;
  const innerHeight = height - pad.top - pad.bottom;
  const days = points.map((p) => Date.parse(`${p.day}T00:00:00Z`));
  const first = days[0]!;
  const span = Math.max(1, days.at(-1)! - first);
  const x = (t: number) => pad.left + (points.length === 1 ? innerWidth / 2 : ((t - first) / span) * innerWidth);
  const y = (s: number) => pad.top + (1 - s / 100) * innerHeight;
  const guides = [0, 50, 75, 100]
    .map(
      (s) =>
        `<line class="chart-guide" x1="${pad.left}" x2="${width - pad.right}" y1="${y(s)}" y2="${y(s)}"></line><text class="chart-label" x="${pad.left - 6}" y="${y(s) + 4}" text-anchor="end">${s}</text>`,
    )
    .join('');
  const coordinates = points.map((p, i) => `${x(days[i]!).toFixed(1)},${y(p.score).toFixed(1)}`);
  const dots = points
    .map(
      (p, i) =>
        `<circle class="chart-dot" cx="${x(days[i]!).toFixed(1)}" cy="${y(p.score).toFixed(1)}" r="3"><title>${e(p.day)}: ${p.score.toFixed(1)}</title></circle>`,
    )
    .join('');
  const last = points.at(-1)!;
  return `<svg class="health-chart" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title chart-desc">
<title id="chart-title">Health score over time</title>
<desc id="chart-desc">${points.length} daily points from ${e(points[0]!.day)} to ${e(last.day)}; the latest ${last.score.toFixed(1)}.</desc>
${guides}
<polyline class="chart-line" points="${coordinates.join(' ')}"></polyline>${dots}
<text class="chart-label" x="${pad.left}" y="${height - 8}">${e(points[0]!.day)}</text>
<text class="chart-label" x="${width - pad.right}" y="${height - 8}" text-anchor="end">${e(last.day)}</text>
</svg>`;
}

function detail(project: ProjectHealthView | undefined): string {
  if (!project)
    return '<section id="project-detail" class="card health-detail" tabindex="-1"><h2>A project</h2><p>Select a project for its checks and its score over time.</p></section>';
  const checks =
    project.checks.length === 0
      ? '<p>Not scored yet: the health is computed after each import and sync.</p>'
      : `<table class="records checks" aria-labelledby="detail-title">
<thead><tr><th scope="col">Check</th><th scope="col">Result</th><th scope="col">Value</th><th scope="col">Threshold</th><th scope="col">Weight</th></tr></thead>
<tbody>${checkRows(project.checks)}</tbody></table>`;
  const coverage = project.coverage === null ? '' : ` · ${Math.round(project.coverage * 100)} % of the weights known`;
  return `<section id="project-detail" class="card health-detail" aria-labelledby="detail-title" tabindex="-1">
<h2 id="detail-title">${e(project.name)}</h2>
<p class="lead"><span class="score-value big">${score(project.score)}</span> ${bucketBadge(project.bucket)} <span class="muted">${e(project.level)}${coverage}</span></p>
<p class="hint">The API: <a href="/api/v0/projects/${e(project.key)}/health">/api/v0/projects/${e(project.key)}/health</a> (with a key) and the badge <a href="/badges/projects/${e(project.key)}/health.json">health.json</a>.</p>
<h3>Score over time</h3>
${historyChart(project.history)}
<h3>Checks</h3>
${checks}
</section>`;
}

function gapsList(gaps: HealthDocument['gaps']): string {
  const rows = gaps.items
    .map(
      (g) =>
        `<tr><th scope="row">${e(g.name)}</th><td>${e(g.country)}</td><td class="number">${g.population.toLocaleString('en')}</td><td>${
          g.nearest_chapter
            ? `${e(g.nearest_chapter.key)} <span class="muted">${g.nearest_chapter.distance_km.toLocaleString('en')} km</span>`
            : '–'
        }</td></tr>`,
    )
    .join('\n');
  return `<section class="health-gaps" aria-labelledby="gaps-title">
<h2 id="gaps-title">Where OWASP is missing <span class="count">${gaps.count}</span></h2>
<p class="hint">Cities of ${gaps.minPopulation.toLocaleString('en')}+ people with no active chapter within ${gaps.radiusKm} km, largest first${
    gaps.count > gaps.items.length ? ` (the first ${gaps.items.length})` : ''
  }. All of them, with other sizes and radii: <code>/api/v0/chapters/gaps/</code>. Chapters on the <a href="/map">map</a>.</p>
<table class="records" aria-labelledby="gaps-title">
<thead><tr><th scope="col">City</th><th scope="col">Country</th><th scope="col">People</th><th scope="col">Nearest chapter</th></tr></thead>
<tbody>${rows || '<tr><td colspan="4">None.</td></tr>'}</tbody></table>
</section>`;
}

export function healthPage(document: HealthDocument, query: HealthQuery): string {
  const shown = document.projects.filter((p) => matches(p, query));
  const selected = document.projects.find((p) => p.key.toLowerCase() === query.project);
  return layout({
    title: 'Project health · OWASP community data',
    current: 'health',
    main: `
<h1>Project health</h1>
<p class="lead">Every active OWASP project by its health score (0–100, the reference's 17 checks with its known flaws
fixed: <code>docs/health.md</code>): healthy from 75, needs attention from 50. Select a project for its checks and its
score over time.</p>
${filters(query)}
<p class="map-status" role="status" id="health-status">${shown.length} of ${document.projects.length} projects</p>
<div class="health-layout">
  <section class="health-projects" aria-labelledby="projects-title">
    <h2 id="projects-title">Projects by score</h2>
    <table class="records" aria-labelledby="projects-title">
      <thead><tr><th scope="col">#</th><th scope="col">Project</th><th scope="col">Level</th><th scope="col">Score</th></tr></thead>
      <tbody id="project-rows">${projectRows(shown, query)}</tbody>
    </table>
  </section>
  <div class="health-side">
${detail(selected)}
${gapsList(document.gaps)}
  </div>
</div>`,
  });
}
