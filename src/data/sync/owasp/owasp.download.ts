// Downloads the OWASP website's data files into a folder, so the bundled data's reader can read them.
// Each file has a time limit and a size limit; a failure names the file and the address.
import fs from 'node:fs/promises';
import path from 'node:path';
import { VERSION } from '../../../version.ts';
import { ImportError } from '../../base/import-error.ts';
import type { RequestState } from '../../base/sync-state.queries.ts';

/** The OWASP website's `_data` folder, where `cds sync owasp` reads when no source is given. */
export const OWASP_DATA_URL = 'https://raw.githubusercontent.com/OWASP/owasp.github.io/main/_data/';

/** What readOwaspData reads; only chapters.json is required. */
export const OWASP_FILES = [
  'chapters.json',
  'inactive_chapters.json',
  'committees.json',
  'projects.json',
  'project_levels.json',
  'events.yml',
  'corp_members.yml',
  'leaders.json',
] as const;

export interface DownloadLimits {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
}

export type Download = { file: string; url: string } & (
  { status: 200; state: RequestState } | { status: 304; state: RequestState } | { status: 404 }
);

/** GETs base + file into `dir`; conditional when `known` holds what the URL answered last time. */
export async function downloadFile(
  base: string,
  file: string,
  dir: string,
  known: RequestState | undefined,
  limits: DownloadLimits,
): Promise<Download> {
  const url = new URL(file, base.endsWith('/') ? base : `${base}/`).toString();
  const headers: Record<string, string> = { 'user-agent': `community-data-service/${VERSION}` };
  if (known?.etag) headers['if-none-match'] = known.etag;
  if (known?.lastModified) headers['if-modified-since'] = known.lastModified;
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = AbortSignal.any(limits.signal ? [timeout, limits.signal] : [timeout]);
  const fail = (detail: string) => new ImportError(file, undefined, `${detail} (${url})`);
  try {
    const response = await fetch(url, { headers, signal });
    if (response.status === 304 && known) return { file, url, status: 304, state: known };
    if (response.status === 404) {
      await response.body?.cancel();
      return { file, url, status: 404 };
    }
    if (!response.ok) throw fail(`download failed: HTTP ${response.status}`);
    const tooLarge = () => fail(`larger than the ${limits.maxBytes}-byte limit`);
    if (Number(response.headers.get('content-length') ?? 0) > limits.maxBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body ?? []) {
      size += chunk.length;
      if (size > limits.maxBytes) throw tooLarge();
      chunks.push(Buffer.from(chunk));
    }
    await fs.writeFile(path.join(dir, file), Buffer.concat(chunks));
    const state = {
      url,
      etag: response.headers.get('etag') ?? '',
      lastModified: response.headers.get('last-modified') ?? '',
      nextUrl: '',
      githubIds: [],
    };
    return { file, url, status: 200, state };
  } catch (error) {
    if (error instanceof ImportError || limits.signal?.aborted) throw error;
    if (timeout.aborted) throw fail(`no complete answer within ${limits.timeoutMs} ms`);
    const cause =
      error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    throw fail(`download failed: ${cause}`);
  }
}
