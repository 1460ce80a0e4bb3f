// `npm run licences` (part of `npm run check`): no production dependency under the GPL, AGPL or LGPL, in any version
// (issue 31). The production tree is what `npm ci --omit=dev` installs: the entries of package-lock.json without
// `dev: true` (optional platform builds included). Each package's licence is the lock file's, else that of its
// installed package.json (also the old `licenses` list, read as a choice among them).
// An SPDX expression counts by what we may choose: `(MIT OR GPL-3.0)` passes (we take the package under MIT),
// `MIT AND LGPL-2.1` fails, and so does `GPL-2.0 WITH Classpath-exception-2.0` (an exception narrows the copyleft, it
// does not lift it). A package that declares no licence fails too, until a person has read it (REVIEWED).
// Run: npx tsx scripts/licences.ts [path/to/package-lock.json]   (exit 1, naming each package that fails)
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface LockEntry {
  name?: string;
  version?: string;
  license?: unknown;
  dev?: boolean;
  link?: boolean;
  extraneous?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface Finding {
  /** `name@version`. */
  package: string;
  /** Where npm installs it: `node_modules/a/node_modules/b`. */
  location: string;
  /** How the project comes to depend on it: `community-data-service > a > b`. */
  chain: string;
  licence: string;
  reason: 'copyleft' | 'no licence';
}

export interface LicenceReport {
  /** Production packages checked. */
  checked: number;
  failures: Finding[];
  /** Packages offered under a copyleft licence or another, taken under the other (`(MIT OR GPL-3.0)`). */
  chosen: Finding[];
}

/** Packages that declare no licence, whose licence a person has read: `name@version` → what it is. */
const REVIEWED: Record<string, string> = {};

// SPDX's GPL-*, AGPL-*, LGPL-* (and LGPLLR), or their names in free text ("GNU Lesser General Public License", "GPLv3").
const COPYLEFT = /\b(A|L)?GPL|general public licen[cs]e/i;

/** Whether an SPDX expression (or a free-text licence) leaves no choice but the GPL, AGPL or LGPL. */
export function copyleftOnly(expression: string): boolean {
  const tokens = expression.match(/\(|\)|[^\s()]+/g) ?? [];
  let at = 0;
  const peek = () => tokens[at]?.toUpperCase();
  // Each returns whether a non-copyleft choice exists; `null` when the text is no SPDX expression.
  const or = (): boolean | null => {
    let allowed = and();
    while (allowed !== null && peek() === 'OR') {
      at++;
      const next = and();
      allowed = next === null ? null : allowed || next;
    }
    return allowed;
  };
  const and = (): boolean | null => {
    let allowed = withException();
    while (allowed !== null && peek() === 'AND') {
      at++;
      const next = withException();
      allowed = next === null ? null : allowed && next;
    }
    return allowed;
  };
  const withException = (): boolean | null => {
    const allowed = atom();
    if (allowed !== null && peek() === 'WITH') at += tokens[at + 1] ? 2 : 1;
    return allowed;
  };
  const atom = (): boolean | null => {
    const token = tokens[at++];
    if (token === '(') {
      const inner = or();
      return tokens[at++] === ')' ? inner : null;
    }
    if (!token || token === ')' || ['AND', 'OR', 'WITH'].includes(token.toUpperCase())) return null;
    return !COPYLEFT.test(token);
  };
  const allowed = or();
  // Free text ("GNU GPL v3", "BSD-like") is judged whole.
  if (allowed === null || at < tokens.length) return COPYLEFT.test(expression);
  return !allowed;
}

/** The licence a package declares, as one expression ('' when none). */
function declared(license: unknown): string {
  if (typeof license === 'string') return license.trim();
  if (Array.isArray(license)) {
    const each = license.map(declared).filter(Boolean);
    return each.length > 1 ? each.map((one) => `(${one})`).join(' OR ') : (each[0] ?? '');
  }
  if (license && typeof license === 'object' && 'type' in license) return declared(license.type);
  return '';
}

function installedLicence(root: string, location: string): string {
  const file = path.join(root, location, 'package.json');
  if (!existsSync(file)) return '';
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as { license?: unknown; licenses?: unknown };
  return declared(manifest.license) || declared(manifest.licenses);
}

/** Where Node finds `name` from the package at `from`: its own node_modules, then those of the folders above it. */
function resolve(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** How each production package is reached from the project (breadth first: the shortest chain). */
function chains(packages: Record<string, LockEntry>): Map<string, string> {
  const root = packages[''] ?? {};
  const found = new Map<string, string>([['', root.name ?? 'the project']]);
  const queue = [''];
  for (let location = queue.shift(); location !== undefined; location = queue.shift()) {
    const entry = packages[location] ?? {};
    const names = { ...entry.peerDependencies, ...entry.optionalDependencies, ...entry.dependencies };
    for (const name of Object.keys(names)) {
      const target = resolve(packages, location, name);
      if (target === undefined || found.has(target)) continue;
      found.set(target, `${found.get(location)} > ${name}`);
      queue.push(target);
    }
  }
  return found;
}

export function checkLockfile(lockfile: string): LicenceReport {
  const root = path.dirname(lockfile);
  const { packages = {} } = JSON.parse(readFileSync(lockfile, 'utf8')) as { packages?: Record<string, LockEntry> };
  const reached = chains(packages);
  const report: LicenceReport = { checked: 0, failures: [], chosen: [] };
  for (const [location, entry] of Object.entries(packages)) {
    if (!location || entry.dev || entry.link || entry.extraneous) continue;
    report.checked++;
    const name = entry.name ?? location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const id = `${name}@${entry.version ?? '?'}`;
    const licence = declared(entry.license) || installedLicence(root, location) || REVIEWED[id] || '';
    const finding = { package: id, location, chain: reached.get(location) ?? location, licence };
    if (!licence) report.failures.push({ ...finding, reason: 'no licence' });
    else if (copyleftOnly(licence)) report.failures.push({ ...finding, reason: 'copyleft' });
    else if (COPYLEFT.test(licence)) report.chosen.push({ ...finding, reason: 'copyleft' });
  }
  return report;
}

function main(): void {
  const lockfile = path.resolve(
    process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../package-lock.json'),
  );
  const { checked, failures, chosen } = checkLockfile(lockfile);
  for (const { package: id, licence, chain } of chosen)
    console.log(`licences: ${id} is offered under ${licence}: taken under the other licence (${chain})`);
  if (failures.length === 0) {
    console.log(`licences: ${checked} production packages, none only under the GPL, AGPL or LGPL`);
    return;
  }
  for (const { package: id, location, chain, licence, reason } of failures) {
    const what =
      reason === 'copyleft' ? `licence ${licence}` : 'declares no licence (read it, then add it to REVIEWED)';
    console.error(`licences: ${id} ${what}\n  at ${location}\n  through ${chain}`);
  }
  console.error(`licences: ${failures.length} of ${checked} production packages fail (no GPL, AGPL or LGPL)`);
  process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
