// GraphiQL at /graphiql, outside production only: the page, and the files it runs, taken from the npm packages
// graphiql (its UMD build), react and react-dom (their UMD builds), so nothing is loaded from another host and
// the page works offline. /static/graphiql.js renders it with a fetcher that sends the session cookie and the
// CSRF header like every other page request, and answers its introspection
// query with /graphiql/schema.json.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { introspectionFromSchema } from 'graphql';
import { GRAPHIQL_CONTENT_SECURITY_POLICY } from '../http/security-headers.ts';
import { sendStaticFile, staticFile, type StaticFile } from './static.ts';

const require = createRequire(import.meta.url);

/** The URL name of each file → its package and its path inside that package. */
export const GRAPHIQL_ASSETS: Record<string, [pkg: string, file: string]> = {
  'react.production.min.js': ['react', 'umd/react.production.min.js'],
  'react-dom.production.min.js': ['react-dom', 'umd/react-dom.production.min.js'],
  'graphiql.min.js': ['graphiql', 'graphiql.min.js'],
  'graphiql.min.css': ['graphiql', 'graphiql.min.css'],
};

export function graphiqlAssetPath(name: string): string {
  const [pkg, file] = GRAPHIQL_ASSETS[name]!;
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), file);
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphiQL · OWASP community data</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/graphiql/assets/graphiql.min.css">
<link rel="stylesheet" href="/static/graphiql.css">
<script defer src="/graphiql/assets/react.production.min.js"></script>
<script defer src="/graphiql/assets/react-dom.production.min.js"></script>
<script defer src="/graphiql/assets/graphiql.min.js"></script>
<script type="module" src="/static/graphiql.js"></script>
</head>
<body>
<div id="graphiql"><p class="graphiql-loading">Loading GraphiQL…</p></div>
</body>
</html>
`;

export function graphiqlRoutes(app: FastifyInstance): void {
  // Read on the first request, not at start-up: most processes (tests, the CLI, production) never serve them.
  let assets: Promise<Map<string, StaticFile>> | undefined;
  const loadAssets = async () => {
    const files = new Map<string, StaticFile>();
    for (const name of Object.keys(GRAPHIQL_ASSETS))
      files.set(name, staticFile(name, await readFile(graphiqlAssetPath(name))));
    return files;
  };

  app.get('/graphiql', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('content-security-policy', GRAPHIQL_CONTENT_SECURITY_POLICY)
      .send(PAGE),
  );

  // The schema for GraphiQL's documentation and completion: the page's fetcher answers GraphiQL's introspection
  // query with it, because that query is 15 levels deep, beyond the depth limit of every GraphQL request (8),
  // which stays as it is.
  let schema: string | undefined;
  app.get('/graphiql/schema.json', { schema: { hide: true } }, async (_request, reply) => {
    schema ??= JSON.stringify(introspectionFromSchema(app.graphql.schema));
    return reply.type('application/json; charset=utf-8').header('cache-control', 'no-cache').send(schema);
  });

  app.get('/graphiql/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const name = (request.params as { file: string }).file;
    if (!Object.hasOwn(GRAPHIQL_ASSETS, name)) return reply.callNotFound();
    assets ??= loadAssets().catch((error: unknown) => {
      assets = undefined;
      throw error;
    });
    return sendStaticFile(request, reply, (await assets).get(name)!);
  });
}
