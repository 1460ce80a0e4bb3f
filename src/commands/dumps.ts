// cds dumps build: builds the bulk dumps (GET /api/v0/dumps/) now, in the folder of DUMPS_DIR, as a server does in
// the background after every change of the data. Inside a server (the admin channel) it waits for the server's own
// build; on a PostgreSQL server it waits for another instance's (one build at a time per database).
import { parseArgs } from 'node:util';
import type { Config } from '../config.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { buildDumps } from '../dumps/dumps.build.ts';
import { DUMPS } from '../api/v0/resources.ts';
import { UsageError } from './usage.ts';
import { err, isTerminal, out, withDatabase } from './output.ts';
import { table, wantsJson } from './tables.ts';

export async function runDumpsCommand(config: Config, args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { json: { type: 'boolean' }, text: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1 || positionals[0] !== 'build') throw new UsageError('dumps needs one action: build');
  if (values.json && values.text) throw new UsageError('--json and --text exclude each other');
  const dir = config.dumpsDir;
  if (!dir) throw new UsageError('DUMPS_DIR is not set: on a PostgreSQL server, dumps need a folder');
  const json = wantsJson(values, isTerminal('stdout'));
  return withDatabase(config, async (db, database) => {
    await migrateToLatest(db);
    const report = await buildDumps({ database, dir, dumps: DUMPS, wait: true });
    if (json) out(`${JSON.stringify(report, null, 2)}\n`);
    else
      out(
        table(
          ['RESOURCE', 'RECORDS', 'BYTES', 'BUILT', 'MS'],
          report.items.map((item) => [
            item.resource,
            String(item.records),
            String(item.bytes),
            item.built ? 'yes' : 'kept',
            String(item.ms),
          ]),
        ),
      );
    const rate = report.durationMs > 0 ? Math.round(report.records / (report.durationMs / 1000)) : report.records;
    err(
      `dumps of data version ${report.dataVersion} in ${dir}: ${report.records} records in ${report.durationMs} ms ` +
        `(${rate} records/s)\n`,
    );
  });
}
