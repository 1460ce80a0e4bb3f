// What tsx's keepNames does to a derived class in V8 (docs/decisions.md, "no-derived-class"): 3 million constructions
// of a class that extends EventEmitter, with and without the static block that redefines the class's `name` (esbuild
// emits one for every class when it keeps names, as tsx has it do), and of a class that extends nothing. Run with
// --trace-opt to see the aborted compilations:
//   node --trace-opt bench/derived-names.js renamed | grep -c aborted
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';

const kinds = {
  plain: class Plain extends EventEmitter {
    constructor(x) {
      super();
      this.x = x;
    }
  },
  renamed: class Renamed extends EventEmitter {
    static {
      Object.defineProperty(this, 'name', { value: 'Renamed', configurable: true });
    }
    constructor(x) {
      super();
      this.x = x;
    }
  },
  'base class, renamed': class Base {
    static {
      Object.defineProperty(this, 'name', { value: 'Base', configurable: true });
    }
    constructor(x) {
      this.x = x;
    }
  },
};
const only = process.argv[2];
for (const [name, Kind] of Object.entries(kinds)) {
  if (only && name !== only) continue;
  const make = (i) => new Kind(i);
  let sum = 0;
  const started = performance.now();
  for (let i = 0; i < 3e6; i++) {
    sum += make(i).x;
    // a turn of the event loop now and then, as between requests
    if (i % 1000 === 0) await null;
  }
  console.log(`${name}: ${(performance.now() - started).toFixed(0)} ms (${sum > 0 ? 'done' : ''})`);
}
