// The tools' input schemas (JSON Schema, as tools/list shows them) and the check of a call's arguments against them:
// the subset the tools use (object, string, integer, number, boolean, array; enum, bounds, required, no other
// properties). One schema both documents and checks, so a model is told exactly what is refused.

export interface JsonSchema {
  type?: 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'array' | readonly string[];
  description?: string;
  enum?: readonly (string | number | boolean)[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  default?: unknown;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: readonly string[];
  additionalProperties?: boolean | JsonSchema;
  maxProperties?: number;
}

/**
 * A call its tool cannot answer (refused arguments, a missing record, a filter REST refuses): a result with `isError`
 * whose message says why, for the model to correct.
 */
export class ToolError extends Error {}

const typeOf = (value: unknown): string => {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
};

function fits(type: string, actual: string): boolean {
  return type === actual || (type === 'number' && actual === 'integer');
}

/** Throws ToolError at the first value the schema refuses; `at` names it (`limit`, `filters.country`). */
export function check(schema: JsonSchema, value: unknown, at: string): void {
  const actual = typeOf(value);
  const types = schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : schema.type;
  if (types.length > 0 && !types.some((type) => fits(type, actual)))
    throw new ToolError(`${at} must be ${types.map((t) => (t === 'integer' ? 'an integer' : `a ${t}`)).join(' or ')}`);
  if (schema.enum && !schema.enum.includes(value as string))
    throw new ToolError(`${at} must be one of: ${schema.enum.join(', ')}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      throw new ToolError(`${at} must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      throw new ToolError(`${at} must be at most ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength)
      throw new ToolError(schema.minLength === 1 ? `${at} must not be empty` : `${at} is too short`);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      throw new ToolError(`${at} must be at most ${schema.maxLength} characters`);
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      throw new ToolError(`${at} must have at most ${schema.maxItems} items`);
    if (schema.items) value.forEach((item, i) => check(schema.items!, item, `${at}[${i}]`));
  }
  if (actual === 'object') checkObject(schema, value as Record<string, unknown>, at);
}

function checkObject(schema: JsonSchema, value: Record<string, unknown>, at: string): void {
  const name = (key: string) => (at ? `${at}.${key}` : key);
  const keys = Object.keys(value);
  if (schema.maxProperties !== undefined && keys.length > schema.maxProperties)
    throw new ToolError(`${at || 'arguments'} must have at most ${schema.maxProperties} entries`);
  for (const key of schema.required ?? [])
    if (value[key] === undefined) throw new ToolError(`${name(key)} is required`);
  for (const key of keys) {
    const property = schema.properties?.[key];
    if (property) check(property, value[key], name(key));
    else if (schema.additionalProperties === false) {
      const known = Object.keys(schema.properties ?? {}).join(', ');
      throw new ToolError(`unknown argument ${JSON.stringify(name(key).slice(0, 60))} (known: ${known})`);
    } else if (typeof schema.additionalProperties === 'object')
      check(schema.additionalProperties, value[key], name(key));
  }
}
