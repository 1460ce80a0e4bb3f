// Before a start spends seconds on its database (a first start's initdb, migrations and import), whether the address
// it will listen on can be listened on at all: an operator with a busy port or a wrong HOST learns it at once, not
// after the database is ready. The server still handles the same errors from its real listen (the port may be taken
// between the two).
import net from 'node:net';

/**
 * The error code of listening on `host:port` now (EADDRINUSE, EACCES, EADDRNOTAVAIL, …), or undefined when it can
 * be listened on (the probe's socket is closed again at once) or the port is 0 (any free one).
 */
export function listenProbe(port: number, host: string): Promise<string | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'EUNKNOWN'));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}
