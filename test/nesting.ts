// Deeply nested JSON text for the tests of MAX_JSON_DEPTH (src/http/json-nesting.ts): written out, as JSON.stringify
// itself cannot make the deep ones.

/** `inner` inside `levels` arrays. */
export const arrays = (levels: number, inner = '') => '['.repeat(levels) + inner + ']'.repeat(levels);
/** `inner` inside `levels` objects, each the value of the key "" of the next. */
export const objects = (levels: number, inner = '1') => '{"":'.repeat(levels) + inner + '}'.repeat(levels);
