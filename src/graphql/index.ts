// GraphQL at /graphql/ (mercurius). Query depth and size are limited; introspection exists only outside
// production, like the GraphiQL page (src/web/graphiql.ts).
// What one anonymous client can make the process hold is bounded (issue 25): a small body, a parser token limit, a
// validation in a hook that keeps no invalid document, a document cache of few entries, and the per-address limit of
// the REST API. Before, each distinct invalid ~1 MB document left ~83 MB in mercurius' cache of failed documents.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import mercurius from 'mercurius';
import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { typeDefs } from './schema.graphql.ts';
import { webhookResolvers, webhookTypeDefs } from './webhooks.graphql.ts';
import { resolvers, type Context } from './resolvers.ts';
import { AppError, isDatabaseUnavailable } from '../errors.ts';
import { clientAddress, createLimiter } from '../access/rate-limit.ts';
import { TooManyRequestsError } from '../errors.ts';
import { NestedTooDeepError, nestedDeeper } from '../http/json-nesting.ts';

const MAX_DEPTH = 8;
const MAX_FIELDS = 200;
/** Bytes of a GraphQL request body: the documents the key page, GraphiQL and the Nest frontend send are under 5 kB. */
export const GRAPHQL_BODY_LIMIT = 32 * 1024;
/** Tokens of a document: GraphiQL's introspection query, the largest we serve, has about 300; parsing stops past this. */
export const GRAPHQL_MAX_TOKENS = 2_000;
/** Valid documents kept parsed, by text. Each holds at most GRAPHQL_MAX_TOKENS tokens' nodes (a few hundred kB). */
const DOCUMENT_CACHE_ENTRIES = 64;
/** Validation errors reported for one document (GraphQL's default is 100). */
const MAX_VALIDATION_ERRORS = 20;

// Counts every selected field (aliases included), so a single request cannot ask for thousands.
const limitFields: ValidationRule = (context) => {
  let fields = 0;
  return {
    Field() {
      fields += 1;
      if (fields === MAX_FIELDS + 1)
        context.reportError(new GraphQLError(`Query selects more than ${MAX_FIELDS} fields.`));
    },
  };
};

/** A GraphQL validation failure in mercurius' shape (its `errors` become the response's), status 400. */
class InvalidDocumentError extends Error {
  readonly statusCode = 400;
  readonly code = 'MER_ERR_GQL_VALIDATION';
  constructor(readonly errors: readonly GraphQLError[]) {
    super('Graphql validation error');
  }
}

/**
 * Errors of the HTTP exchange rather than of a document (a body over the limit, a content type we do not read, the
 * rate limit): answered by the app's error handler with the REST API's body and status, not as a GraphQL error.
 */
function isHttpError(error: FastifyError): boolean {
  return error instanceof TooManyRequestsError || error.statusCode === 413 || error.statusCode === 415;
}

/**
 * Validates a document before mercurius does, with the same rules: a document with errors is refused here, before
 * mercurius would keep it (text, parsed document and errors) in its cache of failed documents.
 */
function validateFirst(rules: readonly ValidationRule[]) {
  return (schema: GraphQLSchema, document: DocumentNode): void => {
    const errors = validate(schema, document, rules, { maxErrors: MAX_VALIDATION_ERRORS });
    if (errors.length > 0) throw new InvalidDocumentError(errors);
  };
}

export async function registerGraphql(app: FastifyInstance): Promise<void> {
  const production = app.config.isProduction;
  const rules = [...specifiedRules, limitFields, ...(production ? [NoSchemaIntrospectionCustomRule] : [])];
  // The same per-address limit as the REST API's anonymous calls (RATE_LIMIT_PER_SECOND; shared through Redis),
  // in a bucket of its own, counted before the body is read; and the body limit of this route alone.
  const limit = createLimiter({
    limit: app.config.rateLimitPerSecond,
    fields: app.config.rateLimitHeaders,
    counter: app.shared.counter,
    clock: app.shared.clock,
    identity: (request) => `gql:${clientAddress(request)}`,
  });
  app.addHook('onRoute', (route) => {
    if (route.path !== '/graphql') return;
    route.bodyLimit = GRAPHQL_BODY_LIMIT;
    const own = route.onRequest ? [route.onRequest].flat() : [];
    route.onRequest = [
      async (request: FastifyRequest, reply: FastifyReply) => {
        const limiting = limit(request, reply);
        if (limiting) await limiting;
      },
      // A GET's variables and extensions are JSON text mercurius parses itself (a body's pass the app's parser).
      (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
        const query = request.query as Record<string, unknown>;
        const deep = ['variables', 'extensions'].find((name) => {
          const text = query[name];
          return typeof text === 'string' && nestedDeeper(text);
        });
        done(deep ? new NestedTooDeepError(['query', deep]) : undefined);
      },
      ...own,
    ] as typeof route.onRequest;
  });
  const errorFormatter = formatErrors(production);
  await app.register(mercurius, {
    schema: [typeDefs, webhookTypeDefs].join('\n'),
    resolvers: {
      ...resolvers,
      Query: { ...resolvers.Query, ...webhookResolvers.Query },
      Mutation: { ...resolvers.Mutation, ...webhookResolvers.Mutation },
    } as never,
    path: '/graphql',
    // Our own page (src/web/graphiql.ts): mercurius' loads GraphiQL from unpkg.com.
    graphiql: false,
    queryDepth: MAX_DEPTH,
    // The rules run in validateFirst; mercurius runs them again on what passed (specifiedRules and these).
    validationRules: rules.slice(specifiedRules.length),
    cache: DOCUMENT_CACHE_ENTRIES,
    graphql: { parseOptions: { maxTokens: GRAPHQL_MAX_TOKENS }, validateOptions: { maxErrors: MAX_VALIDATION_ERRORS } },
    context: (request, reply): Context => ({
      request,
      reply,
      db: app.database.db,
      config: app.config,
      now: () => new Date(app.shared.clock()),
    }),
    errorHandler: async (error, _request, reply) => {
      if (isHttpError(error as FastifyError)) throw error;
      const graphqlError =
        error instanceof GraphQLError ? error : new GraphQLError(error.message, { originalError: error });
      const { statusCode, response } = errorFormatter({ errors: [graphqlError] }, { reply, app } as never);
      await reply.code(statusCode).send(response);
    },
    errorFormatter,
  });
  app.graphql.addHook('preValidation', validateFirst(rules));
}

type Formatter = NonNullable<Parameters<typeof mercurius>[1]['errorFormatter']>;

function formatErrors(production: boolean): Formatter {
  return (execution, context) => {
    // Only messages we wrote reach a client: ours (ErrorWithProps, GraphQLError, AppError such as the
    // CSRF refusal, with its status) and GraphQL's own
    // about the query. Anything else (a database error, a bug) is logged with an id, and the client
    // gets a generic message with that id, in every environment.
    let unavailable = false;
    const errors = execution.errors?.map((error) => {
      const original = error.originalError;
      if (
        !original ||
        original instanceof mercurius.ErrorWithProps ||
        original instanceof GraphQLError ||
        original instanceof AppError
      )
        return error;
      if (Array.isArray((original as { errors?: unknown }).errors)) return error; // mercurius' validation errors
      // The request id (X-Request-Id): the same id in the answer, on the response and in every log line of the request.
      const errorId = context.reply.request.id;
      const outage = isDatabaseUnavailable(original);
      unavailable ||= outage;
      context.reply.log[outage ? 'warn' : 'error']({ err: original, errorId }, 'graphql resolver failed');
      const message = `${outage ? 'Service unavailable' : 'Internal server error'} (error id ${errorId})`;
      const code = outage ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_SERVER_ERROR';
      return new GraphQLError(message, {
        nodes: error.nodes,
        positions: error.positions,
        path: error.path,
        extensions: { code, errorId },
      });
    });
    const formatted = mercurius.defaultErrorFormatter(
      { ...execution, ...(errors ? { errors } : {}) } as typeof execution,
      context,
    );
    // In production GraphQL's own messages do not suggest field or argument names.
    if (production) {
      for (const error of formatted.response.errors ?? []) {
        (error as { message: string }).message = error.message.replace(/\s*Did you mean [^?]*\?/g, '');
      }
    }
    // The database (or its disk) is gone: 503 with Retry-After, as the REST API answers, the errors in GraphQL's shape.
    if (unavailable) {
      context.reply.header('retry-after', '5');
      return { ...formatted, statusCode: 503 };
    }
    return formatted;
  };
}
