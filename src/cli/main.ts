// cds <command>: operator commands. Exit 0 on success, 1 on failure, 2 on usage errors;
// messages go to stderr, results to stdout.
import { loadConfig, loadEnvFile } from '../config.ts';
import { USAGE } from '../commands/usage.ts';
import { executeCommand } from '../commands/execute.ts';
import { forwardToServer } from './forward.ts';
import { terminalProgress } from './progress.ts';

/** How long `--wait-for-server` waits for a server that is starting (a first start imports the bundled data). */
const SERVER_WAIT_MS = 180_000;

const argv = process.argv.slice(2);
const waitForServer = argv[0] === '--wait-for-server';
if (waitForServer) argv.shift();
const [command, ...rest] = argv;

if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
  process.stdout.write(USAGE);
  process.exit(command === undefined ? 2 : 0);
}
if (command === 'serve') {
  await import('../server.ts');
} else {
  let config;
  try {
    loadEnvFile();
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`cds: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
  // On the embedded database, a running server holds it: the command runs there (cli/forward.ts,
  // commands/admin-channel.ts).
  if (!config.databaseUrl) {
    const code = await forwardToServer(config.dataDir, [command, ...rest], waitForServer ? SERVER_WAIT_MS : 0);
    if (code !== undefined) process.exit(code);
    if (waitForServer) {
      process.stderr.write(`cds: no server answered on ${config.dataDir} within ${SERVER_WAIT_MS / 1000} s\n`);
      process.exit(1);
    }
  }
  process.exit(await executeCommand(config, command, rest, () => terminalProgress()));
}
