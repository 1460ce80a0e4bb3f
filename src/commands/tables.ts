// Human-readable output of the CLI: aligned tables with a header line, and the summary of an import.
import type { ResourceCounts } from '../data/base/resource-counts.ts';

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ');
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

/** One row per resource: read, new, updated, deactivated (and skipped when the report has it). */
export function countsTable(counts: Record<string, ResourceCounts & { skipped?: number }>): string {
  const withSkipped = Object.values(counts).some((c) => c.skipped !== undefined);
  const headers = ['RESOURCE', 'READ', 'NEW', 'UPDATED', 'DEACTIVATED', ...(withSkipped ? ['SKIPPED'] : [])];
  const rows = Object.entries(counts).map(([name, c]) => [
    name,
    String(c.total),
    String(c.inserted),
    String(c.updated),
    String(c.deactivated),
    ...(withSkipped ? [String(c.skipped ?? 0)] : []),
  ]);
  return table(headers, rows);
}

/** `--json` or `--text` when given; otherwise text on a terminal and JSON for scripts and pipes (as before). */
export function wantsJson(values: { json?: unknown; text?: unknown }, stdoutIsTerminal: boolean): boolean {
  if (values.json === true) return true;
  if (values.text === true) return false;
  return !stdoutIsTerminal;
}
