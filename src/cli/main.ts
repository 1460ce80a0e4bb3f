// cds <command>: operator commands. Exit 0 on success, 1 on failure, 2 on usage errors;
// messages go to stderr, results to stdout.
import { ConfigError, loadConfig } from '../config.ts';
import { ImportError } from '../data/errors.ts';
import { runCommand, UsageError, USAGE } from './commands.ts';

const [command, ...rest] = process.argv.slice(2);

try {
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    process.exit(command === undefined ? 2 : 0);
  }
  if (command === 'serve') {
    await import('../server.ts');
  } else {
    const config = loadConfig();
    const code = await runCommand(config, command, rest);
    process.exit(code);
  }
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`cds: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (error instanceof ConfigError || error instanceof ImportError) {
    process.stderr.write(`cds: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`cds: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
