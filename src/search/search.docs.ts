// The OpenAPI description of `q`. The full rules live in docs/search.md.
import { MAX_QUERY_LENGTH, SEARCH_FIELDS, type SearchResource } from './search.fields.ts';

export const SEARCH_DESCRIPTION = `Structured search, at most ${MAX_QUERY_LENGTH} characters.

- Terms are separated by whitespace and combined with AND: \`field:value\`, or free text (searches \`name\`).
- Numbers and dates take an operator after the colon or instead of it: \`=\`, \`>\`, \`<\`, \`>=\`, \`<=\`.
- Unquoted text matches part of the value, ignoring case; \`"quoted text"\` matches exactly (\`\\"\` for a quote).
- Booleans: \`true\`/\`1\`/\`yes\`/\`on\`, \`false\`/\`0\`/\`no\`/\`off\`. Dates: \`YYYY-MM-DD\` or \`YYYYMMDD\`, UTC.
- Unknown fields and invalid values drop that term only; the rest still applies.

Examples: \`stars:>=100 language:python\` · \`name:"OWASP Nest"\` · \`archived:false created_at>=2024-01-01\` ·
\`nest forks:<10\` · \`updated_at:20240229\``;

/** SEARCH_DESCRIPTION followed by the searchable fields of one resource. */
export function searchDescription(resource: SearchResource): string {
  const fields = Object.entries(SEARCH_FIELDS[resource].fields).map(([name, type]) => `\`${name}\` (${type})`);
  return `${SEARCH_DESCRIPTION}\n\nFields: ${fields.join(', ')}.`;
}
