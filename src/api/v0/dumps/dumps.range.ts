// Byte ranges of a file (RFC 9110 §14): one range of `Range: bytes=…`, honoured when `If-Range` still names the
// file, so that a download broken off resumes where it stopped.

export interface ByteRange {
  start: number;
  /** Included. */
  end: number;
}

/**
 * The range of `header` within a file of `size` bytes: undefined to send the whole file (no header, one that is not
 * `bytes=`, a malformed one, or several ranges, which a server may answer in full); 'unsatisfiable' for 416.
 */
export function byteRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  const match = header === undefined ? null : /^bytes=\s*(\d*)-(\d*)\s*$/i.exec(header.trim());
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    // The last N bytes.
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/**
 * Whether a Range request may be answered in part: without `If-Range`, or with one naming this file (its strong ETag,
 * or its exact Last-Modified date). Otherwise the file changed since the client's first part: it gets the whole file.
 */
export function rangeStillValid(ifRange: string | undefined, etag: string, lastModified: Date): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === etag;
  const date = Date.parse(value);
  return Number.isFinite(date) && Math.floor(date / 1000) === Math.floor(lastModified.getTime() / 1000);
}

/** `If-None-Match` names this ETag (or `*`). */
export function notModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch === '*' || ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
