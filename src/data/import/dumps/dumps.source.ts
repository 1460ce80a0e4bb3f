// Another instance's dumps, read over HTTP with its API key: the manifest, then each file as batches of lines,
// streamed (a file is never held whole), its size, SHA-256 and number of lines checked against the manifest once it
// has been read. A failure names what went wrong (the address, the key, a checksum) as an ImportError.
import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import zlib from 'node:zlib';
import { ImportError } from '../../base/import-error.ts';
import { VERSION } from '../../../version.ts';

export interface DumpSourceOptions {
  /** The source's address (`https://data.example.org`): its manifest is `<base>/api/v0/dumps/`. */
  baseUrl: string;
  /** Sent as X-API-Key (CDS_SOURCE_API_KEY); none when unset. */
  apiKey?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface SourceDump {
  resource: string;
  url: string;
  records: number;
  bytes: number;
  sha256: string;
  data_version: number;
  created_at: string;
}

export interface SourceManifest {
  url: string;
  items: SourceDump[];
}

/** Lines per batch handed to the writer (a batch is one statement's parameter). */
const BATCH_LINES = 2_000;
/** A 429 (the source's rate limit) is waited out this many times. */
const RATE_LIMIT_RETRIES = 20;

export function manifestUrl(baseUrl: string): string {
  return new URL('api/v0/dumps/', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}

export async function readSourceManifest(options: DumpSourceOptions): Promise<SourceManifest> {
  const url = manifestUrl(options.baseUrl);
  const response = await request(url, options, 'is it the address of a community data service?');
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new ImportError(url, undefined, 'the answer is not JSON: is it the address of a community data service?');
  }
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) throw new ImportError(url, undefined, 'the answer has no `items`: not a dumps manifest');
  if (items.length === 0)
    throw new ImportError(
      url,
      undefined,
      'the source has no dumps yet: a server builds them in the background after start and after every import or ' +
        'sync (DUMPS_DIR on a PostgreSQL server), or run `cds dumps build` there',
    );
  return { url, items: items as SourceDump[] };
}

/**
 * The lines of one dump, in batches. Once the file is read: its size, checksum and number of lines must be the
 * manifest's, or an ImportError says which differs (the caller's transaction then changes nothing).
 */
export async function* readDumpLines(
  manifest: SourceManifest,
  item: SourceDump,
  options: DumpSourceOptions,
): AsyncGenerator<string[]> {
  const url = new URL(item.url, manifest.url).toString();
  const file = `${item.resource}.ndjson.gz`;
  const fail = (detail: string) => new ImportError(file, undefined, `${detail} (${url})`);
  const response = await request(url, options, 'the source removed it since its manifest; run the import again');
  const etag = response.headers.get('etag');
  if (etag && etag !== `"${item.sha256}"`) {
    await response.body?.cancel();
    throw fail('the source rebuilt its dumps while they were read; run the import again');
  }
  const hash = createHash('sha256');
  let bytes = 0;
  const body = Readable.fromWeb(response.body! as import('node:stream/web').ReadableStream<Uint8Array>);
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const gunzip = zlib.createGunzip();
  const forward = (error: Error) => gunzip.destroy(error);
  body.on('error', forward);
  counted.on('error', forward);
  body.pipe(counted).pipe(gunzip);
  const checksum = () => {
    const sha256 = hash.digest('hex');
    if (bytes !== item.bytes || sha256 !== item.sha256)
      return fail(
        `checksum mismatch: the manifest says ${item.bytes} bytes with SHA-256 ${item.sha256}, ` +
          `${bytes} bytes with SHA-256 ${sha256} arrived`,
      );
    return undefined;
  };
  let records = 0;
  let batch: string[] = [];
  let rest = '';
  try {
    try {
      for await (const chunk of gunzip) {
        const lines = (rest + (chunk as Buffer).toString('utf8')).split('\n');
        rest = lines.pop()!;
        for (const line of lines) {
          if (line === '') continue;
          batch.push(line);
          if (batch.length >= BATCH_LINES) {
            records += batch.length;
            yield batch;
            batch = [];
          }
        }
      }
    } catch (error) {
      // A file that does not decompress: when its bytes are not the manifest's, that is what to say.
      counted.unpipe(gunzip);
      counted.resume();
      await finished(counted).catch(() => undefined);
      throw checksum() ?? fail(`cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (rest !== '') batch.push(rest);
    records += batch.length;
    if (batch.length > 0) yield batch;
    const mismatch = checksum();
    if (mismatch) throw mismatch;
    if (records !== item.records) throw fail(`${records} lines, where the manifest says ${item.records} records`);
  } finally {
    // Left early (the writer failed): the download is not read any further.
    body.destroy();
    counted.destroy();
    gunzip.destroy();
  }
}

/** A GET with the key; a 429 is waited out (Retry-After); other failures are ImportErrors naming the address. */
async function request(url: string, options: DumpSourceOptions, ifNotFound: string): Promise<Response> {
  const headers: Record<string, string> = { 'user-agent': `community-data-service/${VERSION}` };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, { headers, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new ImportError(
        url,
        undefined,
        `cannot reach the source: ${cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))}`,
      );
    }
    if (response.ok) return response;
    await response.body?.cancel();
    if (response.status === 429 && attempt < RATE_LIMIT_RETRIES) {
      const wait = Math.min(10, Math.max(1, Number(response.headers.get('retry-after')) || 1));
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    if (response.status === 401)
      throw new ImportError(
        url,
        undefined,
        options.apiKey
          ? 'the source refused the key of CDS_SOURCE_API_KEY (HTTP 401): unknown, revoked or expired there'
          : 'the source needs an API key (HTTP 401): set CDS_SOURCE_API_KEY to a key of the source',
      );
    if (response.status === 404) throw new ImportError(url, undefined, `not found (HTTP 404): ${ifNotFound}`);
    throw new ImportError(url, undefined, `the source answered HTTP ${response.status}`);
  }
}
