// /static/<file>: the files of src/web/static, read once at start-up and served from memory,
// so a request can never reach the file system (no path traversal, no per-request I/O).
import crypto from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const CONTENT_TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

export function staticFile(name: string, body: Buffer): StaticFile {
  return {
    body,
    type: CONTENT_TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream',
    etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

/** Sends a file kept in memory, with a short cache lifetime (the names carry no content hash, so a deploy must
 * show up within minutes) and its ETag. */
export function sendStaticFile(request: FastifyRequest, reply: FastifyReply, file: StaticFile) {
  reply.header('content-type', file.type).header('cache-control', 'public, max-age=300').header('etag', file.etag);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.send(file.body);
}

export const STATIC_DIR = new URL('./static/', import.meta.url);

export async function loadStaticFiles(dir: URL = STATIC_DIR): Promise<Map<string, StaticFile>> {
  const files = new Map<string, StaticFile>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith('.')) continue;
    files.set(entry.name, staticFile(entry.name, await readFile(new URL(entry.name, dir))));
  }
  return files;
}

export async function staticRoutes(app: FastifyInstance): Promise<void> {
  const files = await loadStaticFiles();
  app.get('/static/:file', { schema: { hide: true } }, async (request, reply) => {
    const file = files.get((request.params as { file: string }).file);
    if (!file) return reply.callNotFound();
    return sendStaticFile(request, reply, file);
  });
}
