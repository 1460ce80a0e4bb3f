// The labels GitHub projects put on issues for newcomers (GitHub's own `good first issue` and `help wanted`, and the
// common others): GET /api/v0/contribute/ lists the open, unassigned issues that carry one of them. Compared by key
// (labelKey: case, whitespace, hyphens and underscores ignored). docs/contribute.md lists them for clients.
export const BEGINNER_LABELS: readonly string[] = [
  'good first issue',
  'good first bug',
  'good first contribution',
  'good first pr',
  'help wanted',
  'beginner',
  'beginner friendly',
  'beginners',
  'first timers only',
  'first timer',
  'easy',
  'easy fix',
  'up for grabs',
  'starter',
  'newcomer',
  'newcomers',
  'low hanging fruit',
];
