/** Lower-cases an id and removes a `www-chapter-`-style prefix, as the detail routes accept both. */
export function stripPrefix(id: string, prefix: string): string {
  const lower = id.trim().toLowerCase();
  return lower.startsWith(prefix) ? lower.slice(prefix.length) : lower;
}
