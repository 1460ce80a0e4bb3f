// What reading the gazetteer costs this process (docs/decisions.md, "The gazetteer off the event loop"): the longest
// the event loop was held, the time until the gazetteer answers, the process's CPU (every thread), and the memory it
// keeps after full collections: the heap, and the cities' typed arrays, which live outside it. `node --expose-gc --import tsx scripts/gazetteer-load.ts [worker|here]`: `worker` (the default) reads
// the cities as the service does (loadGazetteer), `here` as a command does (gazetteer(), on this thread).
import v8 from 'node:v8';
import type { CityNames } from '../src/data/geocode/geocode.cities.ts';
import { gazetteer, loadGazetteer } from '../src/data/geocode/geocode.gazetteer.ts';
import { locate } from '../src/data/geocode/geocode.ts';

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with node --expose-gc');
const mode = process.argv[2] ?? 'worker';
const keptMb = () => {
  collect();
  collect();
  return v8.getHeapStatistics().used_heap_size / 2 ** 20;
};
const round = (value: number) => Math.round(value * 10) / 10;

const before = keptMb();
let longest = 0;
let last = performance.now();
const ticks = setInterval(() => {
  const now = performance.now();
  longest = Math.max(longest, now - last);
  last = now;
}, 2);
await new Promise((resolve) => setTimeout(resolve, 20));
const cpu = process.cpuUsage();
const started = performance.now();
const loaded = mode === 'here' ? gazetteer() : await loadGazetteer();
const readyMs = performance.now() - started;
const { user, system } = process.cpuUsage(cpu);
await new Promise((resolve) => setTimeout(resolve, 20));
clearInterval(ticks);
if (locate({ name: 'Vienna, Austria' })?.place !== 'Vienna') throw new Error('the gazetteer does not find Vienna');
const after = keptMb();
const tableMb = (loaded.cities as CityNames).tableBytes / 2 ** 20;
console.log(
  JSON.stringify({
    mode,
    readyMs: Math.round(readyMs),
    cpuMs: Math.round((user + system) / 1000),
    longestEventLoopBlockMs: Math.round(longest),
    heapBeforeMb: round(before),
    heapAfterMb: round(after),
    // The cities' typed arrays are ArrayBuffers, outside the heap: counted from their sizes.
    arraysMb: round(tableMb),
    retainedMb: round(after - before + tableMb),
    rssMb: round(process.memoryUsage().rss / 2 ** 20),
  }),
);
