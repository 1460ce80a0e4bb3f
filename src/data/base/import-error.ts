/** A data file that cannot be imported. Names the file and, where known, the record. */
export class ImportError extends Error {
  constructor(
    readonly file: string,
    readonly record: string | undefined,
    readonly detail: string,
  ) {
    super(`${file}${record === undefined ? '' : ` (record ${record})`}: ${detail}`);
    this.name = 'ImportError';
  }
}
