// The terminal's side of the admin channel (commands/admin-channel.ts, which states the protocol): `cds` sends its
// command to the server that holds the embedded database and relays the server's stdout, stderr and exit code.
import net from 'node:net';
import { adminSocketPath, type ForwardedSettings } from '../commands/admin-channel.ts';
import { err, out } from '../commands/output.ts';
import { whyStopWaiting } from '../commands/server-start.ts';

/**
 * Sends a command to the server that holds the data folder. Undefined when no server answers on the socket
 * (none runs: the CLI opens the database itself); with `waitMs`, keeps trying that long first (a server
 * that is starting), and returns 1 having said why as soon as that server failed or is gone. `settings`: the few of the CLI's own that the command uses instead of the server's.
 */
export async function forwardToServer(
  dataDir: string,
  args: string[],
  waitMs = 0,
  settings: ForwardedSettings = {},
): Promise<number | undefined> {
  const file = adminSocketPath(dataDir);
  const since = Date.now();
  const deadline = since + waitMs;
  for (;;) {
    const socket = await connect(file);
    if (socket) return relay(socket, args, settings);
    if (Date.now() >= deadline) return undefined;
    // A server that failed, died or never began: said now, in its own words where it left them (server-start.ts).
    const why = whyStopWaiting(dataDir, since);
    if (why) {
      err(`cds: ${why}\n`);
      return 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function connect(file: string): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(file);
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', () => resolve(undefined));
  });
}

function relay(socket: net.Socket, args: string[], settings: ForwardedSettings): Promise<number> {
  return new Promise((resolve) => {
    let buffer = '';
    let code: number | undefined;
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const message = JSON.parse(buffer.slice(0, end)) as { stdout?: string; stderr?: string; exit?: number };
        buffer = buffer.slice(end + 1);
        if (typeof message.stdout === 'string') out(message.stdout);
        if (typeof message.stderr === 'string') err(message.stderr);
        if (typeof message.exit === 'number') code = message.exit;
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (code === undefined) err('cds: the server closed the admin channel before the command finished\n');
      resolve(code ?? 1);
    });
    socket.write(`${JSON.stringify({ args, ...(Object.keys(settings).length > 0 ? { settings } : {}) })}\n`);
  });
}
