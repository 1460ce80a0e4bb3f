// JSON nested deeper than any request of the service needs is refused before anything walks it (issue 41, item 4).
// JSON.parse copes with any depth, but what walks a parsed value by recursion does not: 30,000 nested arrays fit in
// MCP's 64 kB and overflowed the stack in JSON.stringify of a tool call's arguments, a 500 with a stack in the log.
// So the raw text (or bytes) is scanned first, without recursion and without parsing: brackets outside strings are
// counted, and the first one past the bound stops the scan. The size of what is scanned is the body limit of the route.
import type { FastifyInstance } from 'fastify';
import { InvalidRequestError } from '../errors.ts';

/**
 * Arrays and objects inside one another in a JSON body. The deepest legitimate one is an MCP tool call (message,
 * params, arguments, a filter, its list: 5); GraphQL variables hold flat input objects (3), a secret-scanning report
 * its tokens (2). 32 leaves room for what clients add (`_meta`) and keeps every recursive walk of a value short.
 */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = [0x5b, 0x7b]; // [ {
const CLOSE = [0x5d, 0x7d]; // ] }

/** Whether JSON text, or its UTF-8 bytes (whose multi-byte characters hold no ASCII byte), nests deeper than `max`. */
export function nestedDeeper(text: string | Uint8Array, max = MAX_JSON_DEPTH): boolean {
  const at = typeof text === 'string' ? (i: number) => text.charCodeAt(i) : (i: number) => text[i]!;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = at(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN[0] || c === OPEN[1]) {
      if (++depth > max) return true;
    } else if (c === CLOSE[0] || c === CLOSE[1]) depth--;
  }
  return false;
}

/** 400 for a body nested too deep: `Invalid request` with the place, and a message of its own for GraphQL's shape. */
export class NestedTooDeepError extends InvalidRequestError {
  constructor(loc: [string] | [string, string] = ['body']) {
    super([{ loc, msg: `is nested deeper than ${MAX_JSON_DEPTH} levels` }]);
    const what = loc[1] === undefined ? `The JSON ${loc[0]}` : `The ${loc[0]} parameter ${loc[1]}`;
    this.message = `${what} is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`;
  }
}

/**
 * Fastify's own JSON parser (the same refusals of a prototype or constructor key, of an empty body, of bad JSON),
 * behind the scan. Plugins that read JSON bodies themselves (MCP, secret scanning) scan in their own parsers.
 */
export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (nestedDeeper(text)) done(new NestedTooDeepError(), undefined);
    else void parse(request, text, done);
  });
}
