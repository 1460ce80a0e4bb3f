// A progress bar on stderr when it is a terminal; nothing when output goes to a file or a log.
import cliProgress from 'cli-progress';
import { NO_PROGRESS, type SyncProgress } from '../data/base/sync-log.ts';

export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): SyncProgress {
  if (!stream.isTTY) return NO_PROGRESS;
  let bar: cliProgress.SingleBar | undefined;
  return {
    start(total, what) {
      bar = new cliProgress.SingleBar(
        { stream, format: `${what} [{bar}] {value}/{total} {detail}`, hideCursor: true, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0, { detail: '' });
    },
    advance(detail) {
      bar?.increment(1, { detail });
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}
