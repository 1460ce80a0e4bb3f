import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const ISO_DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:?\d\d)$/i;
const ISO_DATE = /^\d{4}-\d\d-\d\d$/;
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function parseDateTime(value: unknown): Date {
  // A bare date is taken as midnight UTC, so a date picker's value works too.
  if (typeof value === 'string' && (ISO_DATE_TIME.test(value) || ISO_DATE.test(value))) {
    const date = new Date(ISO_DATE.test(value) ? `${value}T00:00:00Z` : value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw new GraphQLError('DateTime must be an ISO 8601 date and time with an offset, e.g. 2030-01-31T00:00:00Z');
}

export const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  serialize: (value) => (value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString()),
  parseValue: parseDateTime,
  parseLiteral: (ast) => parseDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

function parseUuid(value: unknown): string {
  if (typeof value === 'string' && UUID_SHAPE.test(value)) return value.toLowerCase();
  throw new GraphQLError('UUID must be a UUID such as 123e4567-e89b-12d3-a456-426614174000');
}

export const UUID = new GraphQLScalarType({
  name: 'UUID',
  serialize: (value) => String(value),
  parseValue: parseUuid,
  parseLiteral: (ast) => parseUuid(ast.kind === Kind.STRING ? ast.value : undefined),
});
