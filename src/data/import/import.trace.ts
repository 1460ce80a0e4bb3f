// The dataset import's phase trace (IMPORT_TRACE=1, read by config.ts): each phase of an import prints its seconds,
// Node's CPU time and the process's memory to stderr (how docs/decisions.md "import-mem" was measured).

/** Told the name of each phase of a dataset import as it ends. */
export type PhaseTrace = (phase: string) => void;

/** No trace: the default. */
export const NO_TRACE: PhaseTrace = () => {};

/** The trace the import's options ask for: printed to stderr when `on` (IMPORT_TRACE), none otherwise. */
export function phaseTrace(on: boolean): PhaseTrace {
  return on ? tracePhase : NO_TRACE;
}

function tracePhase(phase: string): void {
  const now = performance.now();
  const cpu = process.cpuUsage();
  const { rss, heapUsed } = process.memoryUsage();
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  const seconds = (micros: number) => (micros / 1e6).toFixed(1);
  // Node's own CPU time in the phase (all its threads: the rest of the wall time is waiting, mostly for the database).
  process.stderr.write(
    `import phase ${phase}: ${((now - lastPhase) / 1000).toFixed(1)} s, node cpu ${seconds(cpu.user + cpu.system - lastCpu)} s, rss ${mb(rss)} MB, heap ${mb(heapUsed)} MB (at ${(now / 1000).toFixed(1)} s)\n`,
  );
  lastPhase = now;
  lastCpu = cpu.user + cpu.system;
}
let lastPhase = performance.now();
let lastCpu = 0;
