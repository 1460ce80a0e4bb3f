// GraphQL at /graphql/ (mercurius). Query depth and size are limited; introspection exists only outside
// production, like the GraphiQL page (src/web/graphiql.ts).
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import mercurius from 'mercurius';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationRule } from 'graphql';
import { typeDefs } from './schema.graphql.ts';
import { resolvers, type Context } from './resolvers.ts';
import { AppError, isDatabaseUnavailable } from '../errors.ts';

const MAX_DEPTH = 8;
const MAX_FIELDS = 200;

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

export async function registerGraphql(app: FastifyInstance): Promise<void> {
  const production = app.config.isProduction;
  await app.register(mercurius, {
    schema: typeDefs,
    resolvers: resolvers as never,
    path: '/graphql',
    // Our own page (src/web/graphiql.ts): mercurius' loads GraphiQL from unpkg.com.
    graphiql: false,
    queryDepth: MAX_DEPTH,
    validationRules: production ? [limitFields, NoSchemaIntrospectionCustomRule] : [limitFields],
    context: (request, reply): Context => ({
      request,
      reply,
      db: app.database.db,
      config: app.config,
      now: () => new Date(app.shared.clock()),
    }),
    errorFormatter: (execution, context) => {
      // Only messages we wrote reach a client: ours (ErrorWithProps, GraphQLError, AppError such as the
      // CSRF refusal, with its status) and GraphQL's own
      // about the query. Anything else (a database error, a bug) is logged with an id, and the client
      // gets a generic message with that id, in every environment.
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
        const errorId = crypto.randomUUID();
        const unavailable = isDatabaseUnavailable(original);
        context.reply.log[unavailable ? 'warn' : 'error']({ err: original, errorId }, 'graphql resolver failed');
        const message = `${unavailable ? 'Service unavailable' : 'Internal server error'} (error id ${errorId})`;
        const code = unavailable ? 'SERVICE_UNAVAILABLE' : 'INTERNAL_SERVER_ERROR';
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
      return formatted;
    },
  });
}
