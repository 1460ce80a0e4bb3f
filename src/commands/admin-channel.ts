// The admin channel: while a server runs on the embedded database it holds the data folder (one process at a
// time, see DATA_DIR/pglite.lock), so a `cds` command cannot open it. The server listens on a Unix socket in
// the data folder (DATA_DIR/cds.sock, mode 0600: only the user who owns the data folder can connect; never a
// TCP port), runs the command it receives against its own open database, and streams the command's stdout,
// stderr and exit code back. The CLI (cli/forward.ts) tries that socket first and opens the database itself when
// nobody answers. This is the server's side: it runs in `serve`, never in the terminal's `cds`.
//
// Protocol: one JSON line from the CLI, {"args": [...]} (and "settings", ForwardedSettings); then JSON lines from the
// server, {"stdout": text} / {"stderr": text}, and last {"exit": code}.
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/index.ts';
import { executeCommand } from './execute.ts';
import { runInContext } from './output.ts';

const MAX_REQUEST_BYTES = 64 * 1024;

/**
 * The CLI's own settings a command run by the server uses instead of the server's: the source's key of
 * `cds import --from-dumps` (CDS_SOURCE_API_KEY) belongs to the operator who runs it, not to the server.
 */
export interface ForwardedSettings {
  sourceApiKey?: string;
  /** And how slow that source may be (CDS_SOURCE_TIMEOUT_MS, CDS_SOURCE_MIN_KBPS), as the CLI's environment says. */
  sourcePace?: Config['sourcePace'];
  /** Which of the CLI's streams are terminals: a command chooses tables or JSON as if it ran there. */
  terminal?: { stdout: boolean; stderr: boolean };
}

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, 'cds.sock');
}

export interface AdminChannel {
  readonly path: string;
  close(): Promise<void>;
}

/** Opens the channel; call it only while holding the data folder's lock (a socket file found there is stale). */
interface ChannelOptions {
  config: Config;
  database: Database;
  log: Logger;
  /** Empties the server's memory of valid keys (after `cds keys revoke`). */
  revoked(): Promise<void>;
}

export async function openAdminChannel(options: ChannelOptions): Promise<AdminChannel | undefined> {
  const file = adminSocketPath(options.config.dataDir);
  const server = net.createServer((socket) => void serve(socket, options));
  try {
    await fs.rm(file, { force: true });
    // Created with mode 0600 (no window in which another user could connect).
    const umask = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(file, () => resolve());
      });
    } finally {
      process.umask(umask);
    }
  } catch (error) {
    // A path too long for a socket, a read-only folder: the service runs, `cds` then needs the server stopped.
    options.log.warn({ err: error, socket: file }, 'admin channel unavailable: cds commands need the server stopped');
    return undefined;
  }
  server.on('error', (error) => options.log.warn({ err: error }, 'admin channel error'));
  return {
    path: file,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Node removes the socket file on close.
      }),
  };
}

async function serve(socket: net.Socket, options: ChannelOptions): Promise<void> {
  socket.on('error', () => {});
  const send = (message: object) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
  };
  let request: unknown;
  try {
    request = JSON.parse(await readLine(socket));
  } catch {
    send({ stderr: 'cds: bad request on the admin channel\n' });
    send({ exit: 2 });
    socket.end();
    return;
  }
  const args = (request as { args?: unknown } | null)?.args;
  if (!Array.isArray(args) || args.length === 0 || !args.every((arg) => typeof arg === 'string')) {
    send({ stderr: 'cds: bad request on the admin channel\n' });
    send({ exit: 2 });
    socket.end();
    return;
  }
  const [command, ...rest] = args as string[];
  const settings = (request as { settings?: unknown }).settings as ForwardedSettings | undefined;
  const sourceApiKey = typeof settings?.sourceApiKey === 'string' ? settings.sourceApiKey : undefined;
  const pace = settings?.sourcePace;
  const sourcePace =
    Number.isSafeInteger(pace?.timeoutMs) && Number.isSafeInteger(pace?.minBytesPerSecond)
      ? { timeoutMs: Math.max(100, pace!.timeoutMs), minBytesPerSecond: Math.max(0, pace!.minBytesPerSecond) }
      : options.config.sourcePace;
  const config = { ...options.config, ...(sourceApiKey ? { sourceApiKey } : {}), sourcePace };
  if (command === 'serve') {
    send({ stderr: `cds: a server already runs on ${options.config.dataDir}\n` });
    send({ exit: 1 });
    socket.end();
    return;
  }
  // Only the command's name reaches the log: its arguments may name people or keys.
  options.log.info(
    { command: [command, rest[0]].filter((word) => word && !word.startsWith('-')).join(' ') },
    'cds command on the admin channel',
  );
  const code = await runInContext(
    {
      stdout: (text) => send({ stdout: text }),
      stderr: (text) => send({ stderr: text }),
      database: options.database,
      revoked: options.revoked,
      terminal: { stdout: settings?.terminal?.stdout === true, stderr: settings?.terminal?.stderr === true },
    },
    () => executeCommand(config, command!, rest),
  );
  send({ exit: code });
  socket.end();
}

function readLine(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const end = buffer.indexOf('\n');
      if (end >= 0) {
        socket.off('data', onData);
        resolve(buffer.slice(0, end));
      } else if (buffer.length > MAX_REQUEST_BYTES) {
        socket.off('data', onData);
        reject(new Error('request too long'));
      }
    };
    socket.on('data', onData);
    socket.once('end', () => reject(new Error('closed')));
  });
}
