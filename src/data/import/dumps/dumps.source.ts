// Another instance's dumps, read over HTTP with its API key: the manifest, then each file as batches of lines,
// streamed (a file is never held whole), its size, SHA-256 and number of lines checked against the manifest once it
// has been read. A failure names what went wrong (the address, the key, a checksum) as an ImportError.
// The key stays at home: every request goes to the origin the operator gave (a manifest naming a file elsewhere, or a
// redirect elsewhere, ends the import before any request there). A hostile or broken source cannot make it hang or
// grow: no line over MAX_LINE_BYTES, no byte past the manifest's size, no source slower than its pace (source-pace.ts).
import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import zlib from 'node:zlib';
import { ImportError } from '../../base/import-error.ts';
import { VERSION } from '../../../version.ts';
import { DEFAULT_PACE, PaceWatch, type SourcePace } from './source-pace.ts';

export interface DumpSourceOptions {
  /** The source's address (`https://data.example.org`): its manifest is `<base>/api/v0/dumps/`. */
  baseUrl: string;
  /** Sent as X-API-Key (CDS_SOURCE_API_KEY); none when unset. */
  apiKey?: string | undefined;
  /** How slow the source may be (CDS_SOURCE_TIMEOUT_MS, CDS_SOURCE_MIN_KBPS); DEFAULT_PACE when unset. */
  pace?: SourcePace | undefined;
  signal?: AbortSignal | undefined;
}

export interface SourceDump {
  resource: string;
  url: string;
  records: number;
  bytes: number;
  sha256: string;
  /** The fields of each line's `extra` (absent in dumps of format 1: none). */
  extra_fields?: string[];
  data_version: number;
  created_at: string;
}

export interface SourceManifest {
  url: string;
  /** How the lines are written (absent before format 2). */
  format: number | undefined;
  items: SourceDump[];
}

/** Lines per batch handed to the writer (a batch is one statement's parameter), and their bytes at most (about). */
const BATCH_LINES = 2_000;
const BATCH_BYTES = 8 * 2 ** 20;
/**
 * The longest line read: 8 MiB. The largest records are GitHub's: an issue's body holds at most 65,536 characters, a
 * release's 125,000, so a line of JSON stays under 1 MiB even with every character escaped (`\\u0000`, 6 bytes); 8×
 * that leaves room, and a line past it is no record (a decompression bomb), refused before it fills memory.
 */
export const MAX_LINE_BYTES = 8 * 2 ** 20;
/** The manifest lists a file per resource (about 5 kB): more than this is no manifest. */
const MAX_MANIFEST_BYTES = 2 ** 20;
/** A 429 (the source's rate limit) is waited out this many times. */
const RATE_LIMIT_RETRIES = 20;
/** Redirects followed, on the source's own origin only. */
const MAX_REDIRECTS = 5;

export function manifestUrl(baseUrl: string): string {
  return new URL('api/v0/dumps/', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}

export async function readSourceManifest(options: DumpSourceOptions): Promise<SourceManifest> {
  const url = manifestUrl(options.baseUrl);
  const watch = new PaceWatch(options.pace ?? DEFAULT_PACE, url);
  let text: string;
  try {
    const response = await request(url, options, watch, 'is it the address of a community data service?');
    text = await readCapped(response, watch, url);
  } finally {
    watch.stop();
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ImportError(url, undefined, 'the answer is not JSON: is it the address of a community data service?');
  }
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) throw new ImportError(url, undefined, 'the answer has no `items`: not a dumps manifest');
  if (items.length === 0) {
    const status = (body as { status?: unknown }).status;
    throw new ImportError(
      url,
      undefined,
      status === 'disabled'
        ? 'the source builds no dumps: its operator sets DUMPS_DIR there (a folder), or runs `cds dumps build`'
        : status === 'building'
          ? 'the source is building its first dumps: run the import again in a few seconds'
          : 'the source has no dumps yet: a server builds them in the background after start and after every ' +
            'import or sync (DUMPS_DIR on a PostgreSQL server), or run `cds dumps build` there',
    );
  }
  items.forEach((item: unknown, index) => checkItem(item, index, url, new URL(url).origin));
  const format = (body as { format?: unknown }).format;
  return { url, format: typeof format === 'number' ? format : undefined, items: items as SourceDump[] };
}

/** An item of the manifest is a dump whose file is on the source's origin, or the import ends here. */
function checkItem(item: unknown, index: number, url: string, origin: string): asserts item is SourceDump {
  const dump = item as Partial<SourceDump> | null;
  const count = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
  if (
    typeof dump?.resource !== 'string' ||
    typeof dump.url !== 'string' ||
    !count(dump.records) ||
    !count(dump.bytes) ||
    typeof dump.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(dump.sha256) ||
    typeof dump.data_version !== 'number' ||
    (dump.extra_fields !== undefined &&
      !(Array.isArray(dump.extra_fields) && dump.extra_fields.every((field) => typeof field === 'string')))
  )
    throw new ImportError(url, undefined, `item ${index} is not a dump (resource, url, records, bytes, sha256)`);
  let file: URL;
  try {
    file = new URL(dump.url, url);
  } catch {
    throw new ImportError(url, undefined, `the file of ${dump.resource} has no valid address`);
  }
  if (file.origin !== origin)
    throw new ImportError(
      url,
      undefined,
      `the manifest puts the file of ${dump.resource} on another origin (${file.origin}): files are read from ` +
        `${origin} only, which is given the key`,
    );
}

/**
 * The lines of one dump, in batches. Once the file is read: its size, checksum and number of lines must be the
 * manifest's, or an ImportError says which differs (the caller's transaction then changes nothing). A line longer
 * than MAX_LINE_BYTES, more bytes or lines than the manifest says, or a source behind its pace end it at once.
 */
export async function* readDumpLines(
  manifest: SourceManifest,
  item: SourceDump,
  options: DumpSourceOptions,
): AsyncGenerator<string[]> {
  const url = new URL(item.url, manifest.url).toString();
  const file = `${item.resource}.ndjson.gz`;
  const fail = (detail: string) => new ImportError(file, undefined, `${detail} (${url})`);
  const watch = new PaceWatch(options.pace ?? DEFAULT_PACE, url);
  let response: Response;
  try {
    response = await request(url, options, watch, 'the source removed it since its manifest; run the import again');
  } catch (error) {
    watch.stop();
    throw error;
  }
  const etag = response.headers.get('etag');
  const length = Number(response.headers.get('content-length') ?? 0);
  const wrong =
    etag && etag !== `"${item.sha256}"`
      ? 'the source rebuilt its dumps while they were read; run the import again'
      : length > item.bytes
        ? `${length} bytes announced, more than the ${item.bytes} bytes the manifest says`
        : undefined;
  if (wrong) {
    watch.stop();
    await response.body?.cancel();
    throw fail(wrong);
  }
  const hash = createHash('sha256');
  let bytes = 0;
  const body = Readable.fromWeb(response.body! as import('node:stream/web').ReadableStream<Uint8Array>);
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      watch.received(chunk.length);
      bytes += chunk.length;
      // Past the manifest's size the rest is not read: it cannot be the file.
      if (bytes > item.bytes) return done(fail(`more than the ${item.bytes} bytes the manifest says`));
      hash.update(chunk);
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
  const tooLong = () => fail(`a line longer than ${MAX_LINE_BYTES / 2 ** 20} MiB: not a record`);
  let lines = 0;
  let batch: string[] = [];
  let batchBytes = 0;
  // The current line's bytes so far (a line may span many chunks): joined once, when its end arrives.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const take = (line: string, size: number) => {
    // Empty lines count too: a file of newlines cannot keep the import busy past the manifest's number.
    if (++lines > item.records) throw fail(`more lines than the ${item.records} records the manifest says`);
    if (line === '') return;
    batch.push(line);
    batchBytes += size;
  };
  try {
    try {
      for await (const chunk of gunzip as AsyncIterable<Buffer>) {
        let start = 0;
        for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
          if (pendingBytes + end - start > MAX_LINE_BYTES) throw tooLong();
          const piece = chunk.subarray(start, end);
          take(Buffer.concat([...pending, piece]).toString('utf8'), pendingBytes + piece.length);
          pending = [];
          pendingBytes = 0;
          start = end + 1;
          if (batch.length >= BATCH_LINES || batchBytes >= BATCH_BYTES) {
            // The writer's time is not the source's.
            watch.pause();
            yield batch;
            watch.resume();
            batch = [];
            batchBytes = 0;
          }
        }
        if (start < chunk.length) {
          pendingBytes += chunk.length - start;
          if (pendingBytes > MAX_LINE_BYTES) throw tooLong();
          pending.push(chunk.subarray(start));
        }
      }
    } catch (error) {
      if (watch.signal.aborted) throw watch.signal.reason;
      if (error instanceof ImportError) throw error;
      // A file that does not decompress: when its bytes are not the manifest's, that is what to say.
      counted.unpipe(gunzip);
      counted.resume();
      await finished(counted).catch(() => undefined);
      if (watch.signal.aborted) throw watch.signal.reason;
      throw checksum() ?? fail(`cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (pendingBytes > 0) take(Buffer.concat(pending).toString('utf8'), pendingBytes);
    if (batch.length > 0) yield batch;
    const mismatch = checksum();
    if (mismatch) throw mismatch;
    if (lines !== item.records) throw fail(`${lines} lines, where the manifest says ${item.records} records`);
  } finally {
    // Left early (the writer failed): the download is not read any further.
    watch.stop();
    body.destroy();
    counted.destroy();
    gunzip.destroy();
  }
}

/** The body of a small answer (the manifest), up to MAX_MANIFEST_BYTES. */
async function readCapped(response: Response, watch: PaceWatch, url: string): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body! as AsyncIterable<Uint8Array>) {
      watch.received(chunk.length);
      size += chunk.length;
      if (size > MAX_MANIFEST_BYTES)
        throw new ImportError(
          url,
          undefined,
          `the answer is longer than ${MAX_MANIFEST_BYTES / 2 ** 20} MiB: not a dumps manifest`,
        );
      chunks.push(chunk);
    }
  } catch (error) {
    await response.body?.cancel().catch(() => undefined);
    if (watch.signal.aborted) throw watch.signal.reason;
    if (error instanceof ImportError) throw error;
    throw new ImportError(
      url,
      undefined,
      `the answer was cut: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A GET with the key, on the source's origin only: a redirect is followed there (up to MAX_REDIRECTS), a redirect
 * elsewhere is an error (node's fetch would follow it, key included); a 429 is waited out (Retry-After); other
 * failures are ImportErrors naming the address.
 */
async function request(
  url: string,
  options: DumpSourceOptions,
  watch: PaceWatch,
  ifNotFound: string,
): Promise<Response> {
  const headers: Record<string, string> = { 'user-agent': `community-data-service/${VERSION}` };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  const origin = new URL(url).origin;
  const signal = options.signal ? AbortSignal.any([options.signal, watch.signal]) : watch.signal;
  let redirects = 0;
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, { headers, redirect: 'manual', signal });
    } catch (error) {
      if (watch.signal.aborted) throw watch.signal.reason;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new ImportError(
        url,
        undefined,
        `cannot reach the source: ${cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error))}`,
      );
    }
    if (response.ok) return response;
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      const next = URL.canParse(location, url) ? new URL(location, url) : undefined;
      if (next?.origin !== origin)
        throw new ImportError(
          url,
          undefined,
          `the source redirects (HTTP ${response.status}) to another origin (${next?.origin ?? 'an invalid address'}): ` +
            `the key is sent to ${origin} only; if that is the source, give its address to --from-dumps`,
        );
      if (++redirects > MAX_REDIRECTS) throw new ImportError(url, undefined, `more than ${MAX_REDIRECTS} redirects`);
      url = next.toString();
      continue;
    }
    if (response.status === 429 && attempt < RATE_LIMIT_RETRIES) {
      const wait = Math.min(10, Math.max(1, Number(response.headers.get('retry-after')) || 1));
      watch.pause();
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      watch.resume();
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
