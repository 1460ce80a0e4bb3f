// A webhook receiver on 127.0.0.1, started by the tests: it keeps every request and answers as the test says
// (a status, or a connection dropped without an answer, or an answer held until released).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  /** The request's path. */
  path: string;
  headers: Record<string, string>;
  body: string;
  json: { type: string; timestamp: string; data: { id: number; type: string; key: string; resource: string } };
}

/** What the receiver does with the next request: answer a status, drop the connection, or hold it. */
export type Answer = number | 'drop' | 'hold';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Decides each answer (default: 204). */
  answer: (request: Received) => Answer;
  /** Resolves once `count` requests have come in all. */
  waitFor(count: number): Promise<void>;
  /** Answers the requests held so far with this status. */
  releaseHeld(status?: number): void;
  close(): Promise<void>;
}

/** `/hook/3` → `/hook/4`. */
const nextPath = (path: string) => path.replace(/\d+$/, (n) => String(Number(n) + 1));

export async function startReceiver(): Promise<Receiver> {
  const waiters: { count: number; resolve: () => void }[] = [];
  const held: http.ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => 204,
    waitFor(count) {
      if (receiver.received.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    releaseHeld(status = 204) {
      for (const response of held.splice(0)) response.writeHead(status).end();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const request: Received = { path: req.url ?? '', headers, body, json: JSON.parse(body) as Received['json'] };
      receiver.received.push(request);
      for (const waiter of waiters.filter((w) => receiver.received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const answer = receiver.answer(request);
      if (answer === 'drop') req.socket.destroy();
      else if (answer === 'hold') held.push(res);
      else
        res
          // A redirect names the next path of this receiver: a client that followed it would be seen there.
          .writeHead(answer, { 'content-type': 'text/plain', location: nextPath(request.path) })
          .end(answer >= 300 ? 'x'.repeat(5000) : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hook`;
  return receiver;
}

/** Verifies a delivery with the `standardwebhooks` package (throws when the signature does not hold for `secret`). */
export function verify(secret: string, request: Received): unknown {
  return new Webhook(secret).verify(request.body, request.headers);
}
