// The help text of `cds` (all commands, or one command's lines) and the error a wrong command line throws
// (exit 2, with the help). Below every command module, so each can throw it.
export const USAGE = `Usage: cds <command> [options]

Commands:
  serve                 start the service (same as npm start)
  migrate               apply pending database migrations
  import [--from DIR] [--json|--text]
                        import a dataset (DIR holds owasp/ and github/; default: the bundled data); prints a
                        table of the records read and changed on a terminal, the JSON report otherwise or with --json;
                        a progress bar on stderr when it is a terminal
  import --from-dumps BASE_URL [--json|--text]
                        fill an empty database from the dumps of another instance (BASE_URL, e.g.
                        https://data.example.org; its API key in CDS_SOURCE_API_KEY), checksums verified, in
                        one transaction; only files on BASE_URL's origin; a source sending less than
                        CDS_SOURCE_MIN_KBPS (10) over CDS_SOURCE_TIMEOUT_MS (30000) of waiting is aborted
  dumps build [--json|--text]
                        build the bulk dumps (GET /api/v0/dumps/) in DUMPS_DIR now; a server does it in the
                        background after every import and sync
  status [--json]       the records per resource: stored, and published (what the API's list counts)
  sync github [--org LOGIN]… [--budget N]
                        mirror GitHub organizations (default: SYNC_GITHUB_ORGS): public repositories, issues,
                        labels, milestones, releases, members; incremental and resumable; --budget stops
                        the run before it spends more than N requests of the hourly limit
  sync owasp [--from URL|DIR]
                        load the OWASP website's data files (default: SYNC_OWASP_FROM, else owasp.github.io's)
  sync … --json|--text  the JSON report (default when stdout is not a terminal) or a summary and a table (default
                        on a terminal, with progress bars on stderr)
  snapshots rebuild     rebuild the monthly snapshots from the stored records (import and sync do it too)
  keys create --user LOGIN --name NAME [--expires-in DAYS]
                        create an API key for a user (default 30 days; prints the raw key once, on stdout)
  keys list --user LOGIN
                        list a user's keys (all of them, with their state)
  keys revoke UUID      revoke a key
  keys rotate UUID --grace-hours N
                        replace a key by a new one with the same name and expiry (printed once on stdout);
                        the old key keeps working for N hours (0: revoked at once; at most 168)
  users create LOGIN [--key NAME] [--expires-in DAYS]
                        create a local user (no GitHub account needed); with --key, also an API key
                        for it (default 30 days), printed once on stdout
  webhooks create LOGIN URL [--resource R]… [--type T]… [--description TEXT] [--json]
                        register a webhook for a user (prints its id and its secret once, on stdout; --json:
                        {"id", "secret", …}); at most WEBHOOKS_PER_USER per user
  webhooks list [--json]
                        every webhook, with its owner, state and last delivered change
  webhooks delete ID    delete a webhook
  webhooks replay ID [--after ID] [--until ID]
                        send again the changes after --after up to --until (default: the last delivered) that
                        the webhook already had; enables a disabled webhook again

Options of every command:
  --help, -h            this help, or a command's own (cds sync --help)
  --wait-for-server     (first, before the command) wait until a server on DATA_DIR is ready and run the
                        command there (at most 3 minutes; exit 1 at once, saying why, when that server
                        cannot start or exits)

The database is DATABASE_URL when set, else the embedded one under DATA_DIR. While a server runs on the
embedded database, commands are sent to it over its admin socket (DATA_DIR/cds.sock) and run inside it.
`;

/**
 * The usage lines of one command (`cds keys --help`), or of one of its subcommands when `subcommand` names one
 * (`cds keys rotate --help`: rotate's lines only); undefined for an unknown command.
 */
export function helpFor(command: string, subcommand?: string): string | undefined {
  const lines = USAGE.split('\n');
  const start = lines.findIndex((line) => line === 'Commands:');
  const end = lines.findIndex((line, index) => index > start && line === '');
  const entries: { words: string[]; lines: string[] }[] = [];
  for (const line of lines.slice(start + 1, end)) {
    if (/^ {2}\S/.test(line)) entries.push({ words: line.trim().split(/\s+/), lines: [line] });
    else entries.at(-1)?.lines.push(line);
  }
  const own = entries.filter((entry) => entry.words[0] === command);
  if (own.length === 0) return undefined;
  const exact = own.some((entry) => entry.words[1] === subcommand);
  // `sync … --json|--text` belongs to every subcommand of sync.
  const sub = exact ? own.filter((entry) => entry.words[1] === subcommand || entry.words[1] === '…') : [];
  const shown = sub.length > 0 ? sub : own;
  const name = sub.length > 0 ? `${command} ${subcommand}` : command;
  return `Usage: cds ${name} …\n\n${shown.flatMap((entry) => entry.lines).join('\n')}\n\nAll commands: cds --help\n`;
}

export class UsageError extends Error {}
