// A private Varnish for the edge's tests and bench: Debian's varnishd (with xkey from varnish-modules) on a free port,
// running the shipped deploy/varnish/default.vcl with its backend lines pointed at the service under test.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT } from './process.ts';

export const SHIPPED_VCL = path.join(ROOT, 'deploy', 'varnish', 'default.vcl');
const XKEY = '/usr/lib/x86_64-linux-gnu/varnish/vmods/libvmod_xkey.so';

export interface PrivateVarnish {
  /** The edge's address, `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  /** Its working folder (`varnishstat -n`, `varnishadm -n`). */
  workDir: string;
  destroy(): Promise<void>;
}

/** Why Varnish cannot run here, or undefined when it can (varnishd and xkey installed, run as root). */
export async function varnishMissing(): Promise<string | undefined> {
  const found = await fs.access('/usr/sbin/varnishd').then(
    () => true,
    () => false,
  );
  if (!found) return 'varnishd is missing: apt-get install varnish varnish-modules';
  if (
    !(await fs.access(XKEY).then(
      () => true,
      () => false,
    ))
  )
    return `${XKEY} is missing: apt-get install varnish-modules`;
  if (process.getuid?.() !== 0) return 'varnishd daemonizes with its own users: run as root';
  return undefined;
}

/** The shipped VCL with its backend at 127.0.0.1:`port` (the two lines a deployment rewrites). */
export async function shippedVcl(port: number): Promise<string> {
  const vcl = await fs.readFile(SHIPPED_VCL, 'utf8');
  const rewritten = vcl
    .replace(/^(\s*)\.host = "[^"]*";$/m, '$1.host = "127.0.0.1";')
    .replace(/^(\s*)\.port = "[^"]*";$/m, `$1.port = "${port}";`);
  if (!rewritten.includes(`.port = "${port}";`)) throw new Error('the shipped VCL has no `.port = "…";` line');
  return rewritten;
}

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/sbin/varnishd', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** Starts varnishd (it daemonizes) in front of 127.0.0.1:`backendPort`, and waits until it answers. */
export async function startVarnish(backendPort: number, memoryMb = 64): Promise<PrivateVarnish> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-varnish-'));
  // Varnish's own users read its working folder.
  await fs.chmod(dir, 0o755);
  const vcl = path.join(dir, 'default.vcl');
  await fs.writeFile(vcl, await shippedVcl(backendPort));
  const port = await freePort();
  const pidFile = path.join(dir, 'varnishd.pid');
  const work = path.join(dir, 'work');
  await fs.mkdir(work, { mode: 0o755 });
  const started = await run([
    '-n',
    work,
    '-a',
    `127.0.0.1:${port}`,
    '-f',
    vcl,
    '-s',
    `malloc,${memoryMb}m`,
    '-P',
    pidFile,
  ]);
  if (started.code !== 0) throw new Error(`varnishd did not start (${started.code}): ${started.output}`);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const answered = await fetch(`${url}/`, { method: 'PURGE', headers: { xkey: 'none' } }).then(
      (res) => res.status === 200,
      () => false,
    );
    if (answered) break;
    if (Date.now() > deadline) throw new Error('varnishd does not answer');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    port,
    workDir: work,
    async destroy() {
      const pid = Number(await fs.readFile(pidFile, 'utf8').catch(() => '0'));
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // already gone
        }
        const until = Date.now() + 10_000;
        while (Date.now() < until && alive(pid)) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
