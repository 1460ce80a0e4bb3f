// The OpenAPI description of `q`. The full rules live in docs/search.md.
import { MAX_QUERY_LENGTH, SEARCH_FIELDS, type SearchResource } from './filter.fields.ts';

// Characters are code points: what JSON Schema's maxLength counts, so the 400 matches the published schema.
const RULES = `Structured search, at most ${MAX_QUERY_LENGTH} characters (Unicode code points); empty or blank is ignored.

- Terms are separated by whitespace and combined with AND: \`field:value\`, or free text (searches \`name\`).
- Numbers and dates take an operator after the colon or instead of it: \`=\`, \`>\`, \`<\`, \`>=\`, \`<=\`.
- Unquoted text matches part of the value, ignoring case; \`"quoted text"\` matches exactly (\`\\"\` for a quote).
- Booleans: \`true\`/\`1\`/\`yes\`/\`on\`, \`false\`/\`0\`/\`no\`/\`off\`. Dates: \`YYYY-MM-DD\` or \`YYYYMMDD\`, UTC.
- Unknown fields and invalid values drop that term only; the rest still applies.`;

/** Examples that use only the resource's own fields, so none of their terms is dropped. */
export const SEARCH_EXAMPLES: Readonly<Record<SearchResource, readonly string[]>> = {
  repositories: [
    'stars:>=100 language:python',
    'name:"OWASP Nest"',
    'archived:false created_at>=2024-01-01',
    'nest forks:<10',
    'updated_at:20240229',
  ],
  projects: ['level:flagship created_at>=2024-01-01', 'name:"OWASP Nest"', 'nest updated_at<20240101', 'stars:>=100'],
  chapters: ['country:"United Kingdom"', 'region:europe london', 'name:"OWASP London"'],
};

const examples = (resource: SearchResource) => SEARCH_EXAMPLES[resource].map((q) => `\`${q}\``).join(' · ');

export const SEARCH_DESCRIPTION = `${RULES}\n\nExamples: ${examples('repositories')}`;

/** The rules, examples for one resource and its searchable fields. */
export function searchDescription(resource: SearchResource): string {
  const fields = Object.entries(SEARCH_FIELDS[resource].fields).map(([name, type]) => `\`${name}\` (${type})`);
  return `${RULES}\n\nExamples: ${examples(resource)}\n\nFields: ${fields.join(', ')}.`;
}
