// Expired sessions are deleted from the database every SWEEP_INTERVAL_MS (they already stopped
// signing anyone in at their expiry: findSessionUser reads only live ones). The timer is the app's:
// stopped, and a sweep in progress awaited, when the app closes.
import type { FastifyInstance } from 'fastify';
import { deleteExpiredSessions } from './sessions.queries.ts';

export const SWEEP_INTERVAL_MS = 60 * 60_000;

/** Runs `task` every `intervalMs` until the returned function stops it; tests pass one they drive themselves. */
export type Every = (intervalMs: number, task: () => Promise<void>) => () => void;

export const everyInterval: Every = (intervalMs, task) => {
  const timer = setInterval(() => void task(), intervalMs).unref();
  return () => clearInterval(timer);
};

export function scheduleSessionSweep(app: FastifyInstance, every: Every = everyInterval): void {
  let sweeping: Promise<void> | undefined;
  const sweep = (): Promise<void> =>
    (sweeping ??= deleteExpiredSessions(app.database.db)
      .then((deleted) => {
        if (deleted > 0) app.log.debug({ deleted }, 'expired sessions deleted');
      })
      .catch((error: unknown) =>
        app.log.warn({ err: error }, 'expired sessions not deleted; the next sweep tries again'),
      )
      .finally(() => (sweeping = undefined)));
  const stop = every(SWEEP_INTERVAL_MS, sweep);
  app.addHook('onClose', async () => {
    stop();
    await sweeping;
  });
}
