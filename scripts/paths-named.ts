// `npm run paths`: every file of this repository named in a comment, a doc or a script exists (part of `npm run check`).
// A comment naming a file that was moved or removed sends the next reader to nothing; this makes it a failure instead
// of a sentence in a review. A name counts when it has a folder of this repository in front (`src/db/index.ts`, or
// `db/index.ts` below src/, or `./memo.ts` beside the naming file) or is a bare file name (`memo.ts`, found anywhere
// in the tree). A built file of dist/ stands for its source in src/. In code only comments are read. Run with `--list`
// to print every name checked.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
/** Where names are looked for: the code, its tests and tools, and the prose. */
const SCANNED = /^(src|test|bench|scripts|docs|deploy|bin|\.ci)\/|^[^/]+\.(md|json|js|cjs)$/;
const SKIPPED = /^(src\/web\/static\/vendor\/|test\/fixtures\/)|package-lock\.json$|\.(png|jpg|gz|svg)$|\.areas\.json$/;
/** A file name of the kinds this repository holds, with an optional path of plain segments in front. */
const NAME = /(?<![\w@.$/:%-])((?:\.{1,2}\/|[\w-]+\/)*[a-z0-9_-]+(?:\.[\w-]+)*\.(?:ts|js|cjs|md|sh|vcl))(?![\w/-])/g;
/** Bare names that are other projects' files: a package's scripts, the reference's sources (OWASP/Nest). */
const FOREIGN = new Set(['ical.js', 'config.d.ts', 'start.js', 'authQueries.ts', 'apiKeyQueries.ts']);
/** A line quoting another project's path: what follows is theirs. */
const ELSEWHERE = /OWASP\/Nest|@platformatic|\.min\.js/;
/** In code, only comments are prose: a string in code is checked by running the code. */
const CODE = /\.(ts|js|mjs|cjs)$/;

const tracked = execFileSync('git', ['-C', ROOT, 'ls-files', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => file && existsSync(path.join(ROOT, file)));
const basenames = new Set(tracked.map((file) => path.basename(file)));
const folders = new Set(tracked.flatMap((file) => ancestors(file)));

function ancestors(file: string): string[] {
  const out: string[] = [];
  for (let dir = path.dirname(file); dir !== '.'; dir = path.dirname(dir)) out.push(dir);
  return out;
}

function exists(name: string, from: string): boolean {
  const bare = !name.includes('/');
  if (bare) return basenames.has(name) || FOREIGN.has(name);
  const built = name.replace(/^(\.\/)?dist\/(.*)\.js$/, 'src/$2.ts');
  const candidates = [built, `src/${built}`, path.join(path.dirname(from), built)];
  return candidates.some((candidate) => existsSync(path.join(ROOT, path.normalize(candidate))));
}

/** A name with a folder counts only when its first folder is one of ours (not `node_modules/x/y.js`, a URL's path). */
function ours(name: string, from: string): boolean {
  if (!name.includes('/')) return true;
  if (name.startsWith('.')) return true;
  const first = name.split('/')[0]!;
  return (
    first === 'dist' ||
    folders.has(first) ||
    folders.has(`src/${first}`) ||
    folders.has(path.join(path.dirname(from), first))
  );
}

/** The comment of a line of code: after `//`, or the whole line inside a block comment (` * …`). */
function commentOf(line: string): string {
  const trimmed = line.trimStart();
  if (trimmed.startsWith('*') || trimmed.startsWith('/*')) return line;
  const slashes = line.search(/(?<![:'"`\\])\/\/ /);
  return slashes >= 0 ? line.slice(slashes) : '';
}

const missing: string[] = [];
let checked = 0;
for (const file of tracked) {
  if (!SCANNED.test(file) || SKIPPED.test(file)) continue;
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  lines.forEach((whole, index) => {
    const line = CODE.test(file) ? commentOf(whole) : whole;
    if (ELSEWHERE.test(line)) return;
    for (const match of line.matchAll(NAME)) {
      const name = match[1]!;
      // A URL's path or a module specifier of a package is not ours to check.
      const before = line.slice(0, match.index);
      if (/(https?:\/\/|github\.com\/|npm:|node_modules\/)\S*$/.test(before)) continue;
      if (!ours(name, file)) continue;
      checked++;
      if (process.argv.includes('--list')) console.log(`${file}:${index + 1}: ${name}`);
      if (!exists(name, file)) missing.push(`${file}:${index + 1}: ${name}`);
    }
  });
}

if (missing.length > 0) {
  console.error(`${missing.length} file name(s) in comments, docs or scripts name no file of this repository:`);
  for (const line of missing) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`paths: ${checked} file names in comments, docs and scripts, all found`);
