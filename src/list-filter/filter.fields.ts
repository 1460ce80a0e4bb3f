// The vocabulary of structured search: field types, the typed conditions the parser produces,
// and the searchable fields of each resource exactly as the contract lists them.

export type FieldType = 'string' | 'number' | 'boolean' | 'date';
export type Operator = '=' | '>' | '<' | '>=' | '<=';
export const OPERATORS: readonly Operator[] = ['=', '>', '<', '>=', '<='];

export interface FieldSpec<F extends string = string> {
  /** Public field names (lower case) and their types. */
  readonly fields: Readonly<Record<F, FieldType>>;
  /** The field a token without a field prefix (free text) searches. */
  readonly defaultField: F;
}

export type Condition<F extends string = string> =
  /** exact: quoted, case-sensitive equality; otherwise a case-insensitive substring. */
  | { kind: 'string'; field: F; value: string; exact: boolean }
  | { kind: 'number'; field: F; op: Operator; value: number }
  | { kind: 'boolean'; field: F; value: boolean }
  /** from: UTC midnight of the day written; op applies to that whole day (see docs/search.md). */
  | { kind: 'date'; field: F; op: Operator; from: Date };

/** Enforced by the routes (400 above it); the parser itself accepts any length. */
export const MAX_QUERY_LENGTH = 1000;

export const SEARCH_FIELDS = {
  repositories: {
    fields: {
      name: 'string',
      language: 'string',
      stars: 'number',
      forks: 'number',
      contributors: 'number',
      archived: 'boolean',
      created_at: 'date',
      updated_at: 'date',
    },
    defaultField: 'name',
  },
  projects: {
    // stars: the most starred of the project's stored repositories (the reference's aggregate).
    fields: { name: 'string', level: 'string', stars: 'number', created_at: 'date', updated_at: 'date' },
    defaultField: 'name',
  },
  chapters: {
    fields: { name: 'string', country: 'string', region: 'string' },
    defaultField: 'name',
  },
} as const satisfies Record<string, FieldSpec>;

export type SearchResource = keyof typeof SEARCH_FIELDS;
/** The field names of one resource, e.g. `SearchField<'projects'>` is `'name' | 'level' | …`. */
export type SearchField<R extends SearchResource> = keyof (typeof SEARCH_FIELDS)[R]['fields'] & string;
