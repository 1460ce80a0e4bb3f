// The server's dump builds: after every change of the data (an import or sync here, through the admin channel, or on
// another instance: the data version moves), a build in the background, never on a request's path. One at a time; a
// change during a build asks for one more after it (changes meanwhile coalesce into that one). On a PostgreSQL server
// the instance that gets the build lock builds; an instance that finds it taken tries again later, and then finds the
// shared folder up to date (or builds its own folder's).
import type { Database } from '../db/index.ts';
import { readDataVersion } from '../announcements/counters.queries.ts';
import type { DataVersionWatcher } from '../announcements/data-version.ts';
import { readDatabaseId } from '../db/meta.queries.ts';
import type { DumpSource } from './dump-source.ts';
import { buildDumps } from './dumps.build.ts';
import { readManifest } from './dumps.files.ts';

export interface DumpBuildsOptions {
  database: Database;
  dir: string;
  /** Every dump, in the order of the manifest (api/v0/resources.ts, DUMPS). */
  dumps: readonly DumpSource[];
  watcher: DataVersionWatcher;
  log: {
    info(object: object, message: string): void;
    warn(object: object, message: string): void;
  };
  /** After start: the first look at the folder (a build when it is behind the data); at once by default. */
  firstBuildMs?: number;
  /** After a change of the data: the build waits this long for the rest of a run's changes (at most a minute). */
  quietMs?: number;
  /** After a failed build, or one another instance was running: the next look. */
  retryMs?: number;
  /** After a build that wrote files (server.ts: the edge purges the dumps' answers). */
  onBuilt?: () => void;
}

export interface DumpBuilds {
  /** Stops the timer, aborts a build under way and waits for it. */
  stop(): Promise<void>;
}

const MAX_WAIT_MS = 60_000;

export function startDumpBuilds(options: DumpBuildsOptions): DumpBuilds {
  const { database, dir, dumps, log } = options;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let building: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  /** When the build asked for by the first of a series of changes starts at the latest. */
  let due: number | undefined;

  const schedule = (ms: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(run, ms).unref();
  };
  /** A sync commits unit by unit: each change puts the build off a little, never more than MAX_WAIT_MS after the first. */
  const changed = () => {
    const now = Date.now();
    due ??= now + MAX_WAIT_MS;
    schedule(Math.max(0, Math.min(options.quietMs ?? 1_000, due - now)));
  };

  /** Whether the folder holds this database's dumps of the current data version. */
  const upToDate = async () => {
    const manifest = await readManifest(dir);
    if (!manifest) return false;
    const [database_, version] = await Promise.all([readDatabaseId(database.db), readDataVersion(database.db)]);
    return (
      manifest.database === database_ && manifest.data_version === version && manifest.last_change_id !== undefined
    );
  };

  function run(): void {
    due = undefined;
    if (stopped) return;
    if (building) {
      again = true;
      return;
    }
    building = (async () => {
      if (await upToDate()) return;
      const report = await buildDumps({ database, dir, dumps, signal: controller.signal });
      if (report.outcome === 'locked') {
        schedule(options.retryMs ?? 30_000);
        return;
      }
      const built = report.items.filter((item) => item.built).map((item) => item.resource);
      log.info(
        { dataVersion: report.dataVersion, records: report.records, durationMs: report.durationMs, built },
        'dumps built',
      );
      if (built.length > 0) options.onBuilt?.();
    })()
      .catch((error: unknown) => {
        if (stopped) return;
        log.warn({ err: error }, 'dumps could not be built; trying again later');
        schedule(options.retryMs ?? 30_000);
      })
      .finally(() => {
        building = undefined;
        if (again) {
          again = false;
          schedule(0);
        }
      });
  }

  options.watcher.onChange(changed);
  // At once: the server starts this after the first start's import (startup.ts) and listening, so the first dumps are
  // there seconds after the data (the manifest says `building` meanwhile: api/v0/dumps/dumps.routes.ts).
  schedule(options.firstBuildMs ?? 0);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
      await building;
    },
  };
}
