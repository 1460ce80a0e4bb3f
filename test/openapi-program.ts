// Writes a TypeScript program that calls every operation of an OpenAPI document through a client generated from
// it (openapi-typescript + openapi-fetch), reading each answer through the generated types.
export interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  responses: Record<
    string,
    {
      description: string;
      headers?: Record<string, unknown>;
      content?: Record<string, { schema: Schema; example?: unknown }>;
    }
  >;
  tags?: string[];
}
export type Schema = Record<string, unknown>;
export interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, unknown> };
  security: unknown[];
  tags: { name: string }[];
}

export function operations(doc: OpenApi): { path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) => (methods.get ? [{ path, op: methods.get }] : []));
}

/** A page of records (its 200 is a `Paged…` component): the lists, and the search. */
export const isList = (op: Operation) =>
  /\/Paged\w+$/.test(String(op.responses['200']?.content?.['application/json']?.schema.$ref ?? ''));

/** The required query parameters of an operation (the search's `q`), each with its documented example. */
export function requiredQuery(op: Operation): Record<string, string> {
  return Object.fromEntries(
    (op.parameters ?? [])
      .filter((p) => p.in === 'query' && p.required)
      .map((p) => [p.name, String((p.schema?.examples as unknown[] | undefined)?.[0] ?? 'x')]),
  );
}

/** A URL of the operation: its path with these values, and its required query parameters. */
export function operationUrl(path: string, op: Operation, values: Record<string, string>): string {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? `missing-${name}`));
  const query = new URLSearchParams(requiredQuery(op)).toString();
  return query ? `${filled}?${query}` : filled;
}

/** The schema a `$ref` points at (one level). */
export function deref(doc: OpenApi, schema: Schema | undefined): Schema {
  const ref = schema?.$ref as string | undefined;
  return ref ? doc.components.schemas[ref.split('/').pop()!]! : (schema ?? {});
}

/** The TypeScript type a required property must have in the generated client, from its JSON schema. */
function tsType(doc: OpenApi, schema: Schema): string {
  const resolved = deref(doc, schema);
  const variants = (resolved.anyOf ?? resolved.oneOf) as Schema[] | undefined;
  if (variants) return variants.map((v) => tsType(doc, v)).join(' | ');
  if (Array.isArray(resolved.enum)) return resolved.enum.map((v) => JSON.stringify(v)).join(' | ');
  switch (resolved.type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `readonly (${tsType(doc, resolved.items as Schema)})[]`;
    default:
      return 'object';
  }
}

/** `const created_at: string = record.created_at;` for each required property: each must compile. */
function reads(doc: OpenApi, schema: Schema, variable: string): string[] {
  const resolved = deref(doc, schema);
  const properties = (resolved.properties ?? {}) as Record<string, Schema>;
  return ((resolved.required ?? []) as string[]).map(
    (name, i) =>
      `      const v${i}: ${tsType(doc, properties[name]!)} = ${variable}[${JSON.stringify(name)}]; void v${i};`,
  );
}

/**
 * The program: for each operation, one typed call with `path` parameters from `values`, then the typed reads of
 * the record (the detail, or the first item of a list page). It prints `{operationId: {status, body}}` as JSON.
 * Each list also gets a call with an ordering outside its enum, which must NOT compile (`@ts-expect-error`).
 */
export function clientProgram(doc: OpenApi, values: Map<string, Record<string, string>>): string {
  const lines = [
    "import createClient from 'openapi-fetch';",
    "import type { paths } from './schema.ts';",
    '',
    // The one thing of Node's it uses, declared: checked without @types/node (two thirds of tsc's parsing).
    'declare const process: { env: Record<string, string | undefined> };',
    // The JSON answers: the chapters and events lists also document application/geo+json, which openapi-fetch
    // would otherwise union into their response types (docs/api.md, GeoJSON).
    "const client = createClient<paths, 'application/json'>({ baseUrl: process.env.BASE_URL!, headers: { 'X-API-Key': process.env.API_KEY! } });",
    'const results: Record<string, { status: number; body: unknown }> = {};',
    '',
  ];
  for (const { path, op } of operations(doc)) {
    // Path parameters typed as the document types them (issue and milestone numbers are integers).
    const pathParams = Object.fromEntries(
      Object.entries(values.get(op.operationId) ?? {}).map(([name, value]) => {
        const type = op.parameters?.find((p) => p.in === 'path' && p.name === name)?.schema?.type;
        return [name, type === 'integer' ? Number(value) : value];
      }),
    );
    const ok = deref(doc, op.responses['200']!.content!['application/json']!.schema);
    const ordering = op.parameters?.find((p) => p.name === 'ordering')?.schema?.enum as string[] | undefined;
    const declared = (name: string) => op.parameters?.some((p) => p.in === 'query' && p.name === name) ?? false;
    const required = requiredQuery(op);
    const query = isList(op)
      ? {
          page: 1,
          ...(declared('page_size') ? { page_size: 2 } : { limit: 2 }),
          ...(ordering ? { ordering: ordering[1] ?? ordering[0] } : {}),
          ...required,
        }
      : Object.keys(required).length > 0
        ? required
        : undefined;
    const params = JSON.stringify({
      ...(Object.keys(pathParams).length ? { path: pathParams } : {}),
      ...(query ? { query } : {}),
    });
    lines.push(`{`, `  const { data, response } = await client.GET(${JSON.stringify(path)}, { params: ${params} });`);
    lines.push(`  results[${JSON.stringify(op.operationId)}] = { status: response.status, body: data };`);
    if (isList(op)) {
      const items = deref(doc, (deref(doc, ok).properties as Record<string, Schema>).items!).items as Schema;
      lines.push(
        '  if (data) {',
        '    const total: number = data.total_count; void total;',
        '    const record = data.items[0];',
        '    if (record) {',
      );
      lines.push(...reads(doc, items, 'record'), '    }', '  }');
      if (ordering) {
        const wrong = JSON.stringify({
          ...(Object.keys(pathParams).length ? { path: pathParams } : {}),
          query: { ordering: 'not_an_ordering' },
        });
        lines.push(
          `  const typed = () =>`,
          '    // @ts-expect-error: ordering is an enum of the allowed values',
          `    client.GET(${JSON.stringify(path)}, { params: ${wrong} });`,
          '  void typed;',
        );
      }
    } else {
      lines.push('  if (data) {', '    const record = data;', '    {', ...reads(doc, ok, 'record'), '    }', '  }');
    }
    lines.push('}');
  }
  lines.push('', 'console.log(JSON.stringify(results));', '');
  return lines.join('\n');
}
