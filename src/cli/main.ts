// cds <command>: operator commands. Exit 0 on success, 1 on failure, 2 on usage errors;
// messages go to stderr, results to stdout. Everything but `serve` is runCli (run.ts).
import { loadEnvFile } from '../config.ts';
import { runCli } from './run.ts';
import { helpFor } from '../commands/usage.ts';

const argv = process.argv.slice(2);
const [command, ...rest] = argv[0] === '--wait-for-server' ? argv.slice(1) : argv;
if (command === 'serve' && (rest.includes('--help') || rest.includes('-h'))) {
  // Help, and nothing else: no configuration read, no database opened, no server started.
  process.stdout.write(helpFor('serve')!);
  process.exit(0);
} else if (command === 'serve') {
  await import('../server.ts');
} else {
  process.exit(await runCli(argv, { env: process.env, beforeConfig: () => void loadEnvFile() }));
}
