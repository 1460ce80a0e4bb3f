// The answers of successful tool calls, kept per call (tool and arguments) and data version: the same rule as the REST
// response cache (api/v0/rest/response-cache.ts), one step further. A call answered from here has passed the same
// gate (its key, one count against its limit) as the REST request it stands for, and that request's answer was built
// under the same data version; RESPONSE_CACHE=false turns both off. It spares the in-process REST request, which cost
// more than the rest of the call (docs/decisions.md, "mcp").
import type { DataVersionWatcher } from '../announcements/data-version.ts';
import { BoundedMap, bytesOf, memory, type Share } from '../memory-budget.ts';
import { resultEnd } from './mcp.protocol.ts';

const MAX_ENTRIES = 5_000;
/** A call whose arguments are longer than this is not kept (a key is the arguments' text). */
const MAX_KEY_LENGTH = 1_000;

/**
 * Bounded by entries and by the bytes of the MCP share of the memory budget (memory-budget.ts), least recently used out.
 * A result is kept as the bytes of the answer's end, `,"result":…}`: an answer is its start, its request's id, and these
 * (`answerBytes`), so that a kept call is answered without a result's text made again for each request.
 */
export class ToolResults {
  private readonly entries: BoundedMap<Buffer>;

  constructor(
    private readonly watcher: DataVersionWatcher,
    private readonly enabled: boolean,
    share: Share = memory.shares.mcp,
  ) {
    this.entries = new BoundedMap(share, MAX_ENTRIES);
    watcher.onChange(() => this.entries.clear());
  }

  /** The data version a call starts under: its answer is kept only if the data did not change meanwhile. */
  get version(): number {
    return this.watcher.version;
  }

  /** The key of a call, or undefined when it is not kept. */
  keyOf(name: unknown, args: unknown): string | undefined {
    if (!this.enabled || typeof name !== 'string') return undefined;
    const key = `${name}\u0000${JSON.stringify(args ?? {})}`;
    return key.length <= MAX_KEY_LENGTH ? key : undefined;
  }

  /** Whether a call's result is kept (its place in the order of use unchanged: `get` takes it). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The end of the answer of a kept result: `,"result":` and its JSON text, then the message's `}` (`answerBytes`). */
  get(key: string): Buffer | undefined {
    return this.entries.get(key);
  }

  set(key: string, result: string, version: number): void {
    if (version !== this.watcher.version || version === -1) return;
    const end = resultEnd(result);
    this.entries.set(key, end, bytesOf(end));
  }
}
