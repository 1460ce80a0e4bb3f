// cds <command>: operator commands. Exit 0 on success, 1 on failure, 2 on usage errors;
// messages go to stderr, results to stdout. Everything but `serve` is runCli (run.ts).
import { loadEnvFile } from '../config.ts';
import { runCli } from './run.ts';

const argv = process.argv.slice(2);
if ((argv[0] === '--wait-for-server' ? argv[1] : argv[0]) === 'serve') {
  await import('../server.ts');
} else {
  process.exit(await runCli(argv, { env: process.env, beforeConfig: () => void loadEnvFile() }));
}
