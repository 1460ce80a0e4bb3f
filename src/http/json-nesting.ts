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

const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests deeper than `max`. Strings are skipped with indexOf (native, and most of a body's length):
 * to the next quote not escaped by an odd number of backslashes. UTF-8 bytes read as latin1 do as well: a multi-byte
 * character holds no ASCII byte.
 */
export function nestedDeeper(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i === -1) return false;
        let escapes = 0;
        while (text.charCodeAt(i - 1 - escapes) === BACKSLASH) escapes++;
        if (escapes % 2 === 0) break;
      }
    } else if (c === '[' || c === '{') {
      if (++depth > max) return true;
    } else if (c === ']' || c === '}') depth--;
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
