// GET /api/v0/dumps/ (the manifest) and GET /api/v0/dumps/<resource>.ndjson.gz (a file), in the REST scope: the
// key and the rate limit of every other operation (one download is one request). The files are sent as they are
// stored, `application/gzip`, with their checksum as ETag and byte ranges, so that a broken download resumes; neither
// they nor the manifest (which moves with builds, not with the data version) are kept by the response cache.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import type { Static } from '@sinclair/typebox';
import { AppError, NotFoundError } from '../../../errors.ts';
import { ERROR_RESPONSES } from '../common/schemas.ts';
import { BUILDING_RETRY_AFTER_S, DumpManifest, DumpParams } from './dumps.schemas.ts';
import { openDump, readManifest, type StoredManifest } from '../../../dumps/dumps.files.ts';
import { readDatabaseId } from '../../../db/meta.queries.ts';
import { byteRange, notModified, rangeStillValid } from './dumps.range.ts';

export const DUMPS_PATH = '/api/v0/dumps/';
export const DUMPS_OPERATION_ID = 'get_dump_manifest';
const FILE = /^([a-z][a-z-]{0,60})\.ndjson\.gz$/;

export function dumpsRoutes(app: FastifyInstance): void {
  const dir = app.config.dumpsDir;
  // This database's id, once a build gave it one: a manifest of another database's is not served.
  let database: string | undefined;
  const currentManifest = async (): Promise<StoredManifest | undefined> => {
    if (!dir) return undefined;
    const manifest = await readManifest(dir);
    if (!manifest) return undefined;
    database ??= await readDatabaseId(app.database.db);
    return manifest.database === database ? manifest : undefined;
  };

  app.get(
    '/dumps/',
    {
      schema: {
        operationId: DUMPS_OPERATION_ID,
        summary: 'Get the manifest of the bulk dumps',
        description:
          'One gzipped NDJSON file per resource, each line `{"params": …, "record": …}`: the path parameters of the ' +
          "record's detail and the record as the detail answers it. Download a file at its `url` with the same key " +
          '(one download is one request of the rate limit); it is served with `ETag`, `Content-Length` and byte ' +
          'ranges (`Range`, `If-Range`), so a broken download resumes, and `sha256` checks it. The files are built ' +
          'after every import and sync; until the first build `items` is empty and `status` says why: `building` ' +
          '(with `Retry-After`) or `disabled` (with the `setting` to set).',
        tags: ['Dumps'],
        response: { 200: DumpManifest, ...ERROR_RESPONSES },
      },
      // Documented as one record (an ETag, 304), which it is: the manifest of the last build.
      config: { openapi: { kind: 'detail', noun: 'DumpManifest' } },
    },
    async (request: FastifyRequest, reply: FastifyReply) => {
      notCached(request);
      if (!dir)
        return {
          status: 'disabled' as const,
          setting: 'DUMPS_DIR',
          message: 'This instance builds no dumps: its operator sets DUMPS_DIR (a folder) to have them.',
          last_change_id: 0,
          items: [],
        };
      const manifest = await currentManifest();
      // The server builds the first dumps as soon as it has started (dumps/dumps.background.ts).
      if (!manifest) reply.header('retry-after', String(BUILDING_RETRY_AFTER_S));
      return {
        status: manifest ? ('ready' as const) : ('building' as const),
        ...(manifest ? {} : { message: 'The first dumps are being built: ask again after Retry-After seconds.' }),
        ...(manifest ? { format: manifest.format } : {}),
        last_change_id: manifest?.last_change_id ?? 0,
        items: (manifest?.items ?? []).map((item) => ({
          resource: item.resource,
          url: `${DUMPS_PATH}${item.resource}.ndjson.gz`,
          records: item.records,
          bytes: item.bytes,
          sha256: item.sha256,
          extra_fields: item.extra_fields ?? [],
          data_version: item.data_version,
          created_at: item.created_at,
        })),
      };
    },
  );

  app.get(
    '/dumps/:file',
    { schema: { hide: true, params: DumpParams, response: ERROR_RESPONSES }, config: { offers: ['application/gzip'] } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      notCached(request);
      const resource = FILE.exec((request.params as Static<typeof DumpParams>).file)?.[1];
      if (!dir || !resource || !(await currentManifest())) throw new NotFoundError('Dump');
      const opened = await openDump(dir, resource, database!);
      if (!opened) throw new NotFoundError('Dump');
      const { item, handle, size } = opened;
      const etag = `"${item.sha256}"`;
      const lastModified = new Date(item.created_at);
      const headers = request.headers;
      reply.headers({
        etag,
        'last-modified': lastModified.toUTCString(),
        'accept-ranges': 'bytes',
        'cache-control': 'private, no-cache',
        vary: 'X-API-Key',
      });
      const ranged = rangeStillValid(oneHeader(headers['if-range']), etag, lastModified)
        ? byteRange(headers.range, size)
        : undefined;
      const unchanged = notModified(headers['if-none-match'], etag);
      if (unchanged || ranged === 'unsatisfiable') {
        await handle.close();
        if (unchanged) return reply.code(304).send();
        throw new AppError(416, { message: 'Range not satisfiable' }, { 'content-range': `bytes */${size}` });
      }
      const { start, end } = ranged ?? { start: 0, end: size - 1 };
      reply.headers({
        'content-type': 'application/gzip',
        'content-disposition': `attachment; filename="${resource}.ndjson.gz"`,
        'content-length': String(end - start + 1),
      });
      if (ranged) reply.code(206).header('content-range', `bytes ${start}-${end}/${size}`);
      if (request.method === 'HEAD' || size === 0) {
        await handle.close();
        // A stream, even empty: for an empty body Fastify's HEAD route would set Content-Length: 0.
        return reply.send(Readable.from([]));
      }
      return reply.send(handle.createReadStream({ start, end }));
    },
  );
}

function oneHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The response cache keeps 200 answers per data version; these change with builds instead (and files are streamed). */
function notCached(request: FastifyRequest): void {
  request.cacheVersion = -1;
}
