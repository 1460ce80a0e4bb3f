// The dumps folder (DUMPS_DIR): one gzipped NDJSON file per resource, named by its checksum, and
// manifest.json, which names the current file of each. A build writes new files aside, then replaces the manifest in
// one rename: a reader sees the old set or the new one, never half of one; files the manifest no longer names are
// removed after (a download already under way keeps reading the file it opened).
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Changes whenever the lines of a dump are written differently: files of another format are built again. 2: lines
 * carry `extra` (stored fields that filters read; dump-source.ts), listed by each item's `extra_fields`.
 */
export const DUMP_FORMAT = 2;

const MANIFEST = 'manifest.json';
const TEMPORARY = /^\.tmp-/;
const DUMP_FILE = /\.ndjson\.gz$/;

/** One dump as the folder keeps it: the manifest's public fields, its file, and what it was read from. */
export interface StoredDump {
  resource: string;
  file: string;
  records: number;
  bytes: number;
  sha256: string;
  /** The names of the fields of each line's `extra`, in order (absent in manifests of format 1: none). */
  extra_fields?: string[];
  /** The data version at which the file was last known to hold the data (the build's, also for a file kept). */
  data_version: number;
  /** When the file was written. */
  created_at: string;
  /** The versions of the tables it was read from (table_versions): while none moves, the file still holds. */
  tables: Record<string, number> | null;
}

export interface StoredManifest {
  format: number;
  /** The id of the database the dumps were built from (db/meta.queries.ts, readDatabaseId). */
  database: string;
  data_version: number;
  /** The last change of the log the build includes (docs/changes.md); absent in manifests written before the log. */
  last_change_id?: number;
  built_at: string;
  items: StoredDump[];
}

/** The folder's manifest; undefined when there is none yet, or it cannot be read. */
export async function readManifest(dir: string): Promise<StoredManifest | undefined> {
  try {
    const manifest = JSON.parse(await fs.readFile(path.join(dir, MANIFEST), 'utf8')) as StoredManifest;
    return Array.isArray(manifest.items) ? manifest : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces the manifest in one rename, after its bytes are on disk. */
export async function writeManifest(dir: string, manifest: StoredManifest): Promise<void> {
  const temporary = temporaryPath(dir, '.json');
  await writeDurably(temporary, `${JSON.stringify(manifest, null, 2)}\n`);
  await fs.rename(temporary, path.join(dir, MANIFEST));
}

/** A new file's place in the folder while it is written (removed, or renamed into place). */
export function temporaryPath(dir: string, extension = '.ndjson.gz'): string {
  return path.join(dir, `.tmp-${crypto.randomBytes(8).toString('hex')}${extension}`);
}

/** The name of a finished dump: its resource and the start of its checksum (the same bytes, the same name). */
export function dumpFileName(resource: string, sha256: string): string {
  return `${resource}-${sha256.slice(0, 16)}.ndjson.gz`;
}

/** Flushes a finished file to disk, so that the rename that publishes it never publishes a file a crash empties. */
export async function syncFile(file: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function writeDurably(file: string, text: string): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes the dumps the manifest does not name, and files a stopped build left (builds never overlap: see the lock). */
export async function removeUnlisted(dir: string, manifest: StoredManifest): Promise<void> {
  const listed = new Set(manifest.items.map((item) => item.file));
  for (const name of await fs.readdir(dir)) {
    if ((DUMP_FILE.test(name) && !listed.has(name)) || TEMPORARY.test(name))
      await fs.rm(path.join(dir, name), { force: true });
  }
}

/** An open dump, pinned to the file the manifest named when it was opened (a build may replace it meanwhile). */
export interface OpenDump {
  item: StoredDump;
  handle: fs.FileHandle;
  size: number;
}

/** Opens the current file of a resource; undefined when the manifest has none (or names another database's). */
export async function openDump(dir: string, resource: string, database: string): Promise<OpenDump | undefined> {
  // A build may remove the file between the reading of the manifest and the opening: the new manifest then names another.
  for (let attempt = 0; attempt < 3; attempt++) {
    const manifest = await readManifest(dir);
    if (!manifest || manifest.database !== database) return undefined;
    const item = manifest.items.find((candidate) => candidate.resource === resource);
    if (!item) return undefined;
    try {
      const handle = await fs.open(path.join(dir, item.file), 'r');
      const { size } = await handle.stat();
      return { item, handle, size };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return undefined;
}
