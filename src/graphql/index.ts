// GraphQL at /graphql/ (mercurius). Query depth and size are limited; introspection and the
// GraphiQL page exist only outside production.
import type { FastifyInstance } from 'fastify';
import mercurius from 'mercurius';
import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationRule } from 'graphql';
import { typeDefs } from './schema.graphql.ts';
import { resolvers, type Context } from './resolvers.ts';

const MAX_DEPTH = 8;
const MAX_FIELDS = 200;

// Counts every selected field (aliases included), so a single request cannot ask for thousands.
const limitFields: ValidationRule = (context) => {
  let fields = 0;
  return {
    Field() {
      fields += 1;
      if (fields === MAX_FIELDS + 1) context.reportError(new GraphQLError(`Query selects more than ${MAX_FIELDS} fields.`));
    },
  };
};

export async function registerGraphql(app: FastifyInstance): Promise<void> {
  const production = app.config.isProduction;
  await app.register(mercurius, {
    schema: typeDefs,
    resolvers: resolvers as never,
    path: '/graphql',
    graphiql: !production,
    queryDepth: MAX_DEPTH,
    validationRules: production ? [limitFields, NoSchemaIntrospectionCustomRule] : [limitFields],
    context: (request, reply): Context => ({ request, reply, db: app.database.db, config: app.config }),
    errorFormatter: (execution, context) => {
      const formatted = mercurius.defaultErrorFormatter(execution, context);
      // Unexpected errors keep a generic message: no SQL, stack or secret reaches the client.
      for (const error of formatted.response.errors ?? []) {
        const original = (error as GraphQLError).originalError;
        if (original && !(original instanceof mercurius.ErrorWithProps) && !(original instanceof GraphQLError)) {
          context.reply.log.error({ err: original }, 'graphql resolver failed');
          (error as { message: string }).message = 'Internal server error';
        }
      }
      return formatted;
    },
  });
}
