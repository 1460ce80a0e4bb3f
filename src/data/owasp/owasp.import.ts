// The OWASP website data importer: chapters, committees, projects, events, sponsors and leaders
// from the `_data` files of OWASP/owasp.github.io. Reading validates everything before any write.
export { readOwaspData } from './owasp.read.ts';
export { writeOwaspData } from './owasp.write.ts';
export type { OwaspData, OwaspReport, OwaspResource } from './owasp.types.ts';
