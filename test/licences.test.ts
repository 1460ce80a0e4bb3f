// The licence check of `npm run check` (scripts/licences.ts): a production dependency only under the GPL, AGPL or
// LGPL fails it, named with where it is installed and how the project reaches it; a dev dependency, or a package
// that also offers a permissive licence, does not.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkLockfile, copyleftOnly } from '../scripts/licences.ts';
import { ROOT } from './process.ts';

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-licences-'));
after(() => fs.rm(tmp, { recursive: true, force: true }));

/** A project folder with this package-lock.json and these installed package.json files (location → manifest). */
async function project(packages: Record<string, object>, installed: Record<string, object> = {}): Promise<string> {
  const dir = await fs.mkdtemp(path.join(tmp, 'project-'));
  const lock = { name: 'fixture', lockfileVersion: 3, requires: true, packages };
  await fs.writeFile(path.join(dir, 'package-lock.json'), JSON.stringify(lock));
  for (const [location, manifest] of Object.entries(installed)) {
    await fs.mkdir(path.join(dir, location), { recursive: true });
    await fs.writeFile(path.join(dir, location, 'package.json'), JSON.stringify(manifest));
  }
  return path.join(dir, 'package-lock.json');
}

function runScript(lockfile: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/licences.ts'), lockfile], {
    cwd: ROOT,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const GPL_DEEP = {
  '': { name: 'fixture', dependencies: { a: '^1.0.0' }, devDependencies: { tool: '^1.0.0' } },
  'node_modules/a': { version: '1.0.0', license: 'MIT', dependencies: { b: '^2.0.0' } },
  'node_modules/a/node_modules/b': { version: '2.0.0', license: 'GPL-3.0-or-later' },
  'node_modules/b': { version: '1.0.0', license: 'ISC' },
  'node_modules/tool': { version: '1.0.0', license: 'AGPL-3.0-only', dev: true },
};

describe('the licence check', () => {
  it('reads SPDX expressions by the choice they leave', () => {
    for (const expression of ['GPL-2.0', 'GPL-3.0-or-later', 'AGPL-3.0-only', 'LGPL-2.1+', 'GPL-2.0+'])
      assert.equal(copyleftOnly(expression), true, expression);
    assert.equal(copyleftOnly('MIT AND LGPL-3.0'), true, 'AND: both apply');
    assert.equal(copyleftOnly('GPL-2.0-only WITH Classpath-exception-2.0'), true, 'an exception keeps the GPL');
    assert.equal(copyleftOnly('(MIT OR GPL-3.0)'), false, 'OR: we take it under MIT');
    assert.equal(copyleftOnly('(LGPL-2.1 AND BSD-3-Clause) OR Apache-2.0'), false);
    assert.equal(copyleftOnly('MIT OR (GPL-2.0 AND LGPL-2.1)'), false);
    assert.equal(copyleftOnly('GNU Lesser General Public License v3'), true, 'free text');
    for (const expression of ['MIT', 'Apache-2.0 WITH LLVM-exception', 'MPL-2.0', 'BlueOak-1.0.0', 'CC-BY-4.0'])
      assert.equal(copyleftOnly(expression), false, expression);
  });

  it('fails on a production package under the GPL, naming its place and how it is reached; dev ones are not checked', async () => {
    const report = checkLockfile(await project(GPL_DEEP));
    assert.equal(report.checked, 3);
    assert.deepEqual(report.failures, [
      {
        package: 'b@2.0.0',
        location: 'node_modules/a/node_modules/b',
        chain: 'fixture > a > b',
        licence: 'GPL-3.0-or-later',
        reason: 'copyleft',
      },
    ]);
  });

  it('takes a dual licence under its permissive choice, and reads old package.json licence lists', async () => {
    const report = checkLockfile(
      await project(
        {
          '': { name: 'fixture', dependencies: { dual: '1', old: '1', older: '1', bare: '1' } },
          'node_modules/dual': { version: '1.0.0', license: '(MIT OR GPL-3.0)' },
          'node_modules/old': { version: '1.0.0' },
          'node_modules/older': { version: '1.0.0' },
          'node_modules/bare': { version: '1.0.0' },
        },
        {
          'node_modules/old': { licenses: [{ type: 'MIT' }, { type: 'GPL-2.0' }] },
          'node_modules/older': { licenses: [{ type: 'LGPL-2.1' }] },
          'node_modules/bare': {},
        },
      ),
    );
    assert.deepEqual(
      report.chosen.map((finding) => [finding.package, finding.licence]),
      [
        ['dual@1.0.0', '(MIT OR GPL-3.0)'],
        ['old@1.0.0', '(MIT) OR (GPL-2.0)'],
      ],
    );
    assert.deepEqual(
      report.failures.map((finding) => [finding.package, finding.reason]),
      [
        ['older@1.0.0', 'copyleft'],
        ['bare@1.0.0', 'no licence'],
      ],
    );
  });

  it('exits 1 with the offending package on a GPL tree, 0 on the project', async () => {
    const failing = await runScript(await project(GPL_DEEP));
    assert.equal(failing.code, 1, failing.stderr);
    assert.match(failing.stderr, /b@2\.0\.0 licence GPL-3\.0-or-later\n {2}at node_modules\/a\/node_modules\/b\n/);
    assert.match(failing.stderr, /through fixture > a > b/);
    const ours = await runScript(path.join(ROOT, 'package-lock.json'));
    assert.equal(ours.code, 0, ours.stderr);
    assert.match(ours.stdout, /production packages, none only under the GPL, AGPL or LGPL/);
  });
});
