// The data of the /health page, one document per data version and UTC day (daily-document.ts), read from memory by
// every request: the map's rule for what is public (web/map.data.ts). The page filters and searches it; it offers no
// way to page through the API or to load the database. Every project's health, its history, and the gaps at their
// defaults (GET /api/v0/chapters/gaps/).
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/index.ts';
import { chapterGaps, GAP_BOUNDS, type Gap } from '../api/v0/chapters/chapter-gaps.ts';
import { listPlacedChapters } from '../api/v0/chapters/chapter-gaps.queries.ts';
import { dailyDocument } from './daily-document.ts';
import { listHealthPoints, listProjectHealth } from './health.queries.ts';

export interface HealthCheckView {
  name: string;
  value: number | boolean | null;
  threshold: number | boolean;
  direction: string;
  pass: boolean | null;
  weight: number;
  window_days?: number;
}

export interface ProjectHealthView {
  key: string;
  name: string;
  level: string;
  score: number | null;
  bucket: string | null;
  coverage: number | null;
  checks: HealthCheckView[];
  history: { day: string; score: number }[];
}

export interface HealthDocument {
  projects: ProjectHealthView[];
  gaps: { minPopulation: number; radiusKm: number; count: number; items: Gap[] };
}

/** How many gaps the page lists (the API has them all). */
const GAPS_SHOWN = 30;

async function build(db: Db): Promise<string> {
  const [rows, points, chapters] = await Promise.all([
    listProjectHealth(db),
    listHealthPoints(db),
    listPlacedChapters(db),
  ]);
  const history = new Map<string, { day: string; score: number }[]>();
  for (const p of points) {
    const list = history.get(p.project_key) ?? [];
    list.push({ day: String(p.day), score: p.score });
    history.set(p.project_key, list);
  }
  const { minPopulation, radiusKm } = GAP_BOUNDS;
  const gaps = await chapterGaps(chapters, minPopulation.default, radiusKm.default);
  const document: HealthDocument = {
    projects: rows.map((r) => ({
      key: r.key,
      name: r.name,
      level: r.level,
      score: r.score,
      bucket: r.bucket,
      coverage: r.coverage,
      checks: (r.checks ?? []) as HealthCheckView[],
      history: history.get(r.key) ?? [],
    })),
    gaps: {
      minPopulation: minPopulation.default,
      radiusKm: radiusKm.default,
      count: gaps.length,
      items: gaps.slice(0, GAPS_SHOWN),
    },
  };
  return JSON.stringify(document);
}

/** The document, built again when the data version or the UTC day moved. */
export function healthDocument(app: FastifyInstance): () => Promise<HealthDocument> {
  const document = dailyDocument(app, build);
  let parsed: { text: string; value: HealthDocument } | undefined;
  return async () => {
    const { text } = await document();
    if (parsed?.text !== text) parsed = { text, value: JSON.parse(text) as HealthDocument };
    return parsed.value;
  };
}
