// A project's health (issue 47, docs/health.md): the score, its checks and the unscored metrics; its daily history.
import { Type } from '@sinclair/typebox';
import { DateOnly, DateTime, Nullable } from '../common/schemas.ts';

export const HEALTH_BUCKETS = ['healthy', 'needs_attention', 'unhealthy'] as const;

export const Bucket = (description: string) =>
  Type.Unsafe<(typeof HEALTH_BUCKETS)[number]>(Type.String({ enum: [...HEALTH_BUCKETS], description }));

const Value = Type.Union([Type.Number(), Type.Boolean()]);

export const HealthCheck = Type.Object(
  {
    name: Type.String({ description: "The reference's requirement name (`last_release_days`, …)." }),
    value: Nullable(Value),
    threshold: Value,
    direction: Type.String({ enum: ['at_least', 'at_most'] }),
    pass: Nullable(Type.Boolean()),
    weight: Type.Number(),
    window_days: Type.Optional(Type.Integer({ description: "`recent_releases_count` only: the level's window." })),
  },
  { title: 'HealthCheck' },
);

const Days = Nullable(Type.Number());

export const HealthMetrics = Type.Object(
  {
    time_to_close_days: Type.Object({ median: Days, p90: Days, closed_issues: Type.Integer() }),
    stale_open_issues_share: Days,
    release_interval_days_median: Days,
    milestone_on_time_rate: Days,
    issue_authors_365_days: Type.Integer(),
  },
  { title: 'HealthMetrics' },
);

export const ProjectHealth = Type.Object(
  {
    project: Type.String({ description: 'The project key.' }),
    level: Type.String(),
    score: Type.Number({ minimum: 0, maximum: 100 }),
    bucket: Bucket('`healthy` (score ≥ 75), `needs_attention` (≥ 50) or `unhealthy`.'),
    formula: Type.String({ description: 'The formula and its version: `nest-compatible-1`.' }),
    computed_at: DateTime('When this result was first computed.'),
    data_version: Type.Integer({ description: 'The data version of the records it was computed from.' }),
    coverage: Type.Number({ minimum: 0, maximum: 1, description: 'The share of the weights whose input was known.' }),
    checks: Type.Array(HealthCheck),
    metrics: HealthMetrics,
  },
  { title: 'ProjectHealth' },
);

export const HealthPoint = Type.Object(
  {
    day: DateOnly('The UTC day.'),
    score: Type.Number(),
    bucket: Bucket('The bucket that day.'),
    coverage: Type.Number(),
    formula: Type.String(),
    data_version: Type.Integer(),
  },
  { title: 'HealthPoint' },
);

export const HealthHistoryFilters = Type.Object({
  since: Type.Optional(DateOnly('The first day (UTC, `YYYY-MM-DD`), included.')),
  until: Type.Optional(DateOnly('The last day (UTC, `YYYY-MM-DD`), included.')),
});
