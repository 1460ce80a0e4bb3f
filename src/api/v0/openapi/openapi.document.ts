// Post-processing of the generated OpenAPI document: response examples built from the schemas, and every titled
// schema moved to `components.schemas` under its title and referenced with `$ref`, as the reference's document does.
type Schema = Record<string, unknown>;

// Plausible values of the wire's field names, so that an example reads like a real record.
const STRINGS: Record<string, string> = {
  key: 'london',
  name: 'OWASP London',
  login: 'owasp',
  title: 'Add a dark mode',
  url: 'https://owasp.org/www-chapter-london/',
  avatar_url: 'https://avatars.githubusercontent.com/u/1?v=4',
  image_url: 'https://owasp.org/assets/images/supporters/example.png',
  job_url: 'https://example.org/jobs',
  country: 'United Kingdom',
  region: 'Europe',
  description: 'The London chapter of the OWASP Foundation.',
  summary: 'May 5-9, 2025',
  body: 'Steps to reproduce: …',
  bio: 'Application security engineer.',
  company: 'OWASP Foundation',
  location: 'London',
  twitter_username: 'owasp',
  tag_name: 'v1.0.0',
  color: 'd93f0b',
  sponsor_type: 'Gold',
  member_type: 'Gold',
  message: 'Chapter not found',
  detail: "Missing or invalid API key in 'X-API-Key' header",
  msg: 'must be >= 1',
  organization_login: 'OWASP',
  repository_name: 'Nest',
};
// The same names in a record of another kind (the component's title without `Paged`/`Detail`/`Snapshot`).
const BY_RECORD: Record<string, Record<string, string>> = {
  Committee: { key: 'project-committee', name: 'Project Committee', url: 'https://owasp.org/www-committee-project/' },
  Event: { key: 'owasp-global-appsec-eu-2025', name: 'OWASP Global AppSec EU 2025', url: 'https://owasp.org/events/' },
  Issue: { title: 'Add a dark mode', url: 'https://github.com/OWASP/Nest/issues/42' },
  Label: { name: 'bug', description: 'Something is not working' },
  Leader: { key: 'jdoe', name: 'Jane Doe' },
  Member: { name: 'Jane Doe', login: 'jdoe', url: 'https://github.com/jdoe', title: 'Security engineer' },
  Milestone: { title: 'v1.0', url: 'https://github.com/OWASP/Nest/milestone/3', description: 'First stable release.' },
  Organization: { name: 'OWASP', login: 'OWASP', url: 'https://github.com/OWASP' },
  Project: {
    key: 'nest',
    name: 'OWASP Nest',
    url: 'https://owasp.org/www-project-nest/',
    description: 'A community hub for OWASP.',
  },
  Release: {
    name: 'v1.0.0',
    description: 'First stable release.',
    url: 'https://github.com/OWASP/Nest/releases/tag/v1.0.0',
  },
  Repository: { name: 'Nest', description: 'A community hub for OWASP.', url: 'https://github.com/OWASP/Nest' },
  Sponsor: {
    key: 'example-corp',
    name: 'Example Corp',
    url: 'https://example.org/',
    description: 'A supporter of open security.',
  },
  Snapshot: { key: '2025-02', title: 'February 2025' },
};
const record = (title: string) =>
  title
    .replace(/^Paged/, '')
    .replace(/Detail$/, '')
    .replace(/^Snapshot(?=[A-Z])/, '');

const NUMBERS: Record<string, number> = {
  latitude: 51.5074,
  longitude: -0.1278,
  number: 42,
  current_page: 1,
  total_pages: 2,
};

/** An example value that validates against `schema` (the first of its own examples, enum or default if any). */
export function exampleOf(schema: Schema | undefined, name = '', kind = ''): unknown {
  if (!schema) return null;
  if (typeof schema.title === 'string') kind = record(schema.title);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ('default' in schema) return schema.default;
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (variants) return exampleOf(variants.find((v) => v.type !== 'null') ?? variants[0], name, kind);
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, exampleOf(value, key, kind)]));
    }
    case 'array':
      return name === 'loc' ? ['query', 'page'] : [exampleOf(schema.items as Schema, name, kind)];
    case 'string':
      if (schema.format === 'date-time') return '2025-02-14T09:30:00.000Z';
      if (schema.format === 'date') return '2025-05-05';
      return BY_RECORD[kind]?.[name] ?? STRINGS[name] ?? name.replace(/_/g, ' ');
    case 'integer':
      return NUMBERS[name] ?? (name.endsWith('count') ? 120 : 1);
    case 'number':
      return NUMBERS[name] ?? 1.5;
    case 'boolean':
      return name === 'has_next' || name === 'is_member';
    case 'null':
      return null;
    default:
      return null;
  }
}

/** JSON with sorted keys: equal schemas give equal text whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Schema)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const CHILDREN = ['items', 'additionalProperties', 'not', 'contains'] as const;
const LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;

/**
 * Moves every schema with a `title` under the responses into `components.schemas[title]` and puts a `$ref` in its
 * place. Two different schemas with one title keep it apart as `Title2`, `Title3`… (a test holds the names to the
 * reference's, so a clash shows there rather than as a broken document).
 */
export function hoistSchemas(document: {
  paths?: Record<string, Record<string, Schema>>;
  components?: Schema;
}): Record<string, Schema> {
  const components: Record<string, Schema> = {
    ...((document.components?.schemas as Record<string, Schema> | undefined) ?? {}),
  };
  const texts = new Map<string, string>(Object.entries(components).map(([name, schema]) => [canonical(schema), name]));

  const visit = (schema: unknown): unknown => {
    if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
    const out: Schema = { ...(schema as Schema) };
    if (out.properties) {
      out.properties = Object.fromEntries(Object.entries(out.properties as Schema).map(([k, v]) => [k, visit(v)]));
    }
    for (const key of CHILDREN) if (key in out) out[key] = visit(out[key]);
    for (const key of LISTS) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(visit);
    if (typeof out.title !== 'string') return out;
    const text = canonical(out);
    let name = texts.get(text);
    if (!name) {
      name = out.title;
      for (let n = 2; name in components; n++) name = `${out.title}${n}`;
      components[name] = out;
      texts.set(text, name);
    }
    return { $ref: `#/components/schemas/${name}` };
  };

  for (const methods of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      const grouped = operation['x-group-by-response'] as { schema?: unknown } | undefined;
      if (grouped?.schema) grouped.schema = visit(grouped.schema);
      for (const response of Object.values(
        (operation.responses ?? {}) as Record<string, { content?: Record<string, Schema> }>,
      )) {
        for (const media of Object.values(response.content ?? {})) media.schema = visit(media.schema);
      }
    }
  }
  return components;
}
