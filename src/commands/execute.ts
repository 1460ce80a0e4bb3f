// Runs one cds command (everything but `serve`) and turns its errors into messages and exit codes:
// 0 success, 1 failure, 2 usage error. The terminal CLI and the server's admin channel both call it.
import type { Config } from '../config.ts';
import { ConfigError } from '../config.ts';
import { ImportError } from '../data/base/import-error.ts';
import { withPoolerHint } from '../db/server/pool-mode.ts';
import { runCommand } from './commands.ts';
import { helpFor, UsageError, USAGE } from './usage.ts';
import { err, out, type ProgressBar } from './output.ts';

/** `progressBar`: the terminal's progress bar (cli/main.ts); the server's admin channel has none. */
export async function executeCommand(
  config: Config,
  command: string,
  args: string[],
  progressBar?: ProgressBar,
): Promise<number> {
  try {
    if (args.includes('--help') || args.includes('-h')) {
      const help = helpFor(command, args[0]);
      if (!help) throw new UsageError(`unknown command "${command}"`);
      out(help);
      return 0;
    }
    return await runCommand(config, command, args, progressBar);
  } catch (error) {
    if (error instanceof UsageError) {
      err(`cds: ${error.message}\n\n${helpFor(command, args[0]) ?? USAGE}`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof ImportError) {
      err(`cds: ${error.message}\n`);
      return 1;
    }
    err(`cds: ${withPoolerHint(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  }
}
