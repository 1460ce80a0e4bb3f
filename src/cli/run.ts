// `cds <argv>` but `serve`, as a function: main.ts runs it on the process's environment and exits with its code;
// the tests call it in-process with an environment and output of their own (the process's environment is not
// read then). Help, the configuration, the admin channel of a server running on the embedded database, else the
// command on a database it opens itself (commands/execute.ts).
import { loadConfig } from '../config.ts';
import type { Database } from '../db/index.ts';
import { withWebhookSecretsKey } from '../webhooks/secrets-key.ts';
import { USAGE } from '../commands/usage.ts';
import { executeCommand } from '../commands/execute.ts';
import { err, isTerminal, out, runInContext } from '../commands/output.ts';
import { forwardToServer } from './forward.ts';
import { terminalProgress } from './progress.ts';

/** How long `--wait-for-server` waits for a server that is starting (a first start imports the bundled data). */
const SERVER_WAIT_MS = 180_000;

export interface CliOptions {
  /** The environment the configuration is read from. */
  env: Record<string, string | undefined>;
  /** Called before the configuration is read (main.ts: `.env` of the current directory into process.env). */
  beforeConfig?: () => void;
  /** Where stdout and stderr go; default: the process's own (and progress bars when they are terminals). */
  output?: { stdout(text: string): void; stderr(text: string): void };
  /**
   * An open database for the command, used as the admin channel's commands use the server's (and left open),
   * instead of one it opens and closes itself: the tests' in-process commands, many to a data folder. Needs `output`.
   */
  database?: Database;
}

/** Runs the command line and returns its exit code: 0 success, 1 failure, 2 usage error. */
export function runCli(argv: readonly string[], options: CliOptions): Promise<number> {
  const run = () => cli([...argv], options);
  const { output, database } = options;
  return output ? runInContext(database ? { ...output, database } : output, run) : run();
}

async function cli(argv: string[], options: CliOptions): Promise<number> {
  const waitForServer = argv[0] === '--wait-for-server';
  if (waitForServer) argv.shift();
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    out(USAGE);
    return command === undefined ? 2 : 0;
  }
  let config;
  try {
    options.beforeConfig?.();
    config = loadConfig(options.env);
  } catch (error) {
    err(`cds: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  // On the embedded database, a running server holds it: the command runs there (forward.ts,
  // commands/admin-channel.ts).
  if (!config.databaseUrl) {
    const code = await forwardToServer(config.dataDir, [command, ...rest], waitForServer ? SERVER_WAIT_MS : 0, {
      ...(config.sourceApiKey ? { sourceApiKey: config.sourceApiKey } : {}),
      sourcePace: config.sourcePace,
      terminal: { stdout: isTerminal('stdout'), stderr: isTerminal('stderr') },
    });
    if (code !== undefined) return code;
    if (waitForServer) {
      err(`cds: no server answered on ${config.dataDir} within ${SERVER_WAIT_MS / 1000} s\n`);
      return 1;
    }
  }
  // In-process on the embedded database, the webhook secrets are sealed with the data folder's key, as the server's.
  if (command === 'webhooks') {
    try {
      config = await withWebhookSecretsKey(config);
    } catch (error) {
      err(`cds: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
  }
  return executeCommand(config, command, rest, () => terminalProgress());
}
