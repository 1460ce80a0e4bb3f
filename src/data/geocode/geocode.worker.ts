// The worker thread that reads the gazetteer (geocode.cities.ts, geocode.regions.ts) beside the main thread and hands
// it over (geocode.gazetteer.ts): the cities' arrays are transferred, not copied, and everything else it read (the
// package's 135,000 objects) goes with the thread. Started by gazetteer(), it answers on the port of its workerData
// and wakes the thread that waits on its signal.
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { buildCityTable, tableBuffers } from './geocode.cities.ts';
import type { GazetteerData } from './geocode.gazetteer.ts';
import { buildAreas } from './geocode.regions.ts';

const port = parentPort;
if (!port) throw new Error('geocode.worker.ts runs as a worker thread (see geocode.gazetteer.ts)');
const waiting = workerData as { port: MessagePort; signal: Int32Array } | undefined;
try {
  const data: GazetteerData = { cities: buildCityTable(), areas: buildAreas() };
  (waiting?.port ?? port).postMessage(data, tableBuffers(data.cities));
} finally {
  if (waiting) {
    Atomics.store(waiting.signal, 0, 1);
    Atomics.notify(waiting.signal, 0);
  }
}
