// The unscored metrics beside the score (issue 47): CHAOSS's and github/issue-metrics' time to close (median and 90th
// percentile over the last 365 days, `not_planned` left out), the share of open issues older than 14 days without a
// comment, the median days between releases (no pre-releases), the milestone on-time rate, and distinct issue authors.
import type { ProjectInputsRow } from './health.queries.ts';

const round = (value: number | null) => (value === null ? null : Math.round(value * 100) / 100);

export function healthMetrics(row: ProjectInputsRow) {
  return {
    time_to_close_days: {
      median: round(row.close_median_days),
      p90: round(row.close_p90_days),
      closed_issues: row.closed_365,
    },
    stale_open_issues_share: row.open_issues === 0 ? null : round(row.stale_open_issues / row.open_issues),
    release_interval_days_median: round(row.release_gap_median_days),
    milestone_on_time_rate: row.milestones_due === 0 ? null : round(row.milestones_on_time / row.milestones_due),
    issue_authors_365_days: row.issue_authors_365,
  };
}
