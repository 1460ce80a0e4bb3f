// /static/vendor/<file>: the map's third-party files, served by us from the installed npm packages
// (never from another host): d3-array and d3-geo (projection, paths), topojson-client (TopoJSON to
// GeoJSON) and world-atlas's country outlines (Natural Earth, 1:110m). Read once at start-up and
// served from memory like static.ts; the names are fixed, so no request reaches the file system.
import crypto from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const JS = 'text/javascript; charset=utf-8';
export const VENDOR_FILES: Record<string, { pkg: string; file: string; type: string }> = {
  'd3-array.min.js': { pkg: 'd3-array', file: 'dist/d3-array.min.js', type: JS },
  'd3-geo.min.js': { pkg: 'd3-geo', file: 'dist/d3-geo.min.js', type: JS },
  'topojson-client.min.js': { pkg: 'topojson-client', file: 'dist/topojson-client.min.js', type: JS },
  'countries-110m.json': { pkg: 'world-atlas', file: 'countries-110m.json', type: 'application/json' },
};

const require = createRequire(import.meta.url);

/** The folder of an installed package, found the way Node resolves it (its `exports` hide these files from require). */
function packageDir(name: string): string {
  for (const dir of require.resolve.paths(name) ?? []) {
    if (existsSync(path.join(dir, name, 'package.json'))) return path.join(dir, name);
  }
  throw new Error(`npm package ${name} is not installed (npm install)`);
}

export async function vendorRoutes(app: FastifyInstance): Promise<void> {
  const files = new Map<string, { body: Buffer; type: string; etag: string }>();
  for (const [name, { pkg, file, type }] of Object.entries(VENDOR_FILES)) {
    const body = await readFile(path.join(packageDir(pkg), file));
    files.set(name, {
      body,
      type,
      etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    });
  }
  app.get('/static/vendor/:file', { schema: { hide: true } }, async (request, reply) => {
    const file = files.get((request.params as { file: string }).file);
    if (!file) return reply.callNotFound();
    // The versions change only with a deploy; revalidated after a day.
    reply.header('content-type', file.type).header('cache-control', 'public, max-age=86400').header('etag', file.etag);
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    return reply.send(file.body);
  });
}
