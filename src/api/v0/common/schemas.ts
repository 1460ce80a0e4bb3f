// Schemas shared by every REST route: they validate, document (OpenAPI) and serialize.
import { Type, type Static, type TObject, type TSchema, type TProperties } from '@sinclair/typebox';
import { MAX_LIMIT } from './pagination.ts';

/** ISO 8601 with offset on the wire; the serializer accepts the driver's Date objects. */
export const DateTime = (description?: string) =>
  Type.Unsafe<Date | string>(Type.String({ format: 'date-time', ...(description ? { description } : {}) }));
export const DateOnly = (description?: string) =>
  Type.String({ format: 'date', ...(description ? { description } : {}) });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * The columns of `table` that an answer's schema names, one per property (`milestones.title`, …): for answers whose
 * fields are the table's own columns, the schema is then the one list of them. The type names each column, so a
 * property the table does not have fails to compile at the query's `select`, and the rows are typed by the table.
 */
export function columnsOf<T extends string, S extends TObject>(
  table: T,
  schema: S,
): ReadonlyArray<`${T}.${keyof Static<S> & string}`> {
  return Object.keys(schema.properties).map((key) => `${table}.${key}` as `${T}.${keyof Static<S> & string}`);
}

/**
 * `column as field` for the fields of an answer that are another table's columns (a join's), given as
 * `{ field: column }`: the type asks for each of `fields` and no other, so one left out fails to compile.
 */
export function aliasesOf<P extends TProperties, const M extends Record<keyof P & string, string>>(
  fields: P,
  columns: M & Record<Exclude<keyof M, keyof P>, never>,
): ReadonlyArray<{ [K in keyof M & string]: `${M[K]} as ${K}` }[keyof M & string]> {
  return Object.keys(fields).map((field) => `${columns[field as keyof M & string]} as ${field}`) as never;
}

export const PageParams = {
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 1, description: 'Page number, from 1.' }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `Records per page, 1 to ${MAX_LIMIT}; default ${MAX_LIMIT}.`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      maxLength: 4000,
      description:
        'Opaque position in the list, from the `rel="next"` link of the `Link` header: the page after the one that gave it, ' +
        'in the same ordering, read by seeking instead of counting rows (for walking a whole list; records added ' +
        'meanwhile never shift it). With a cursor, `page` only numbers the page in the envelope and links.',
    }),
  ),
  page_size: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_LIMIT, description: 'Alias of `limit` (sent by the reference SDK).' }),
  ),
};

export function orderingParam(allowed: string[], defaultValue: string) {
  return Type.Optional(
    Type.String({
      maxLength: 200,
      description: `One or more of ${allowed.map((v) => `\`${v}\``).join(', ')}, comma-separated; \`-\` means descending. Default \`${defaultValue}\`.`,
    }),
  );
}

export const StringFilter = (description: string) => Type.Optional(Type.String({ maxLength: 200, description }));
export const BooleanFilter = (description: string) => Type.Optional(Type.Boolean({ description }));
export const Latitude = (description: string) => Type.Optional(Type.Number({ minimum: -90, maximum: 90, description }));
export const Longitude = (description: string) =>
  Type.Optional(Type.Number({ minimum: -180, maximum: 180, description }));

export const Query = <T extends TProperties>(properties: T) => Type.Object(properties, { additionalProperties: false });

// Component names are the reference's (Django Ninja's): `PagedChapter` around items named `Chapter`.
export function ListBody<T extends TSchema>(item: T, name: string) {
  return Type.Object(
    {
      items: Type.Array(item),
      count: Type.Integer({ description: 'Records matching the filters.' }),
      total_count: Type.Integer({ description: 'Same as `count`.' }),
      current_page: Type.Integer(),
      total_pages: Type.Integer(),
      has_next: Type.Boolean(),
      has_previous: Type.Boolean(),
    },
    { $id: undefined, title: `Paged${name}` },
  );
}

export const ErrorMessage = Type.Object({ message: Type.String() }, { title: 'ErrorMessage' });
/** The 404 of a detail, named as the reference names it (`ChapterError`). */
export const NotFoundBody = (resource: string) =>
  Type.Object(
    { message: Type.String() },
    { title: `${resource}Error`, examples: [{ message: `${resource} not found` }] },
  );
export const InvalidRequest = Type.Object(
  {
    message: Type.Literal('Invalid request'),
    errors: Type.Array(
      Type.Object({ loc: Type.Array(Type.Union([Type.String(), Type.Integer()])), msg: Type.String() }),
    ),
  },
  {
    title: 'ValidationErrorSchema',
    examples: [{ message: 'Invalid request', errors: [{ loc: ['query', 'page'], msg: 'must be >= 1' }] }],
  },
);
export const Detail = Type.Object({ detail: Type.String() }, { title: 'ErrorDetail' });
const Unauthorized = Type.Object(
  { detail: Type.String() },
  { title: 'UnauthorizedError', examples: [{ detail: "Missing or invalid API key in 'X-API-Key' header" }] },
);
const TooManyRequests = Type.Object(
  { detail: Type.String() },
  { title: 'TooManyRequestsError', examples: [{ detail: 'Too many requests.' }] },
);
const Unavailable = Type.Object(
  {
    message: Type.String(),
    error_id: Type.Optional(
      Type.String({ description: 'The request id (X-Request-Id): quote it to find the cause in the log.' }),
    ),
  },
  {
    title: 'ServiceUnavailableError',
    examples: [{ message: 'Service unavailable', error_id: '0f8fad5b-d9cb-469f-a165-70867728950e' }],
  },
);

/** The error responses every REST operation can give. */
export const ERROR_RESPONSES = {
  400: InvalidRequest,
  401: Unauthorized,
  429: TooManyRequests,
  503: Unavailable,
};

export const LeaderRef = Type.Object(
  {
    key: Nullable(
      Type.String({
        description: "The leader's GitHub login when the leader is a known member (see `/members/{login}`); else null.",
      }),
    ),
    name: Type.String(),
  },
  { title: 'Leader' },
);
