// The import phase of bench:scale: writes a dataset folder in the format `cds import --from` reads
// (the bundled OWASP files, and GitHub responses listed in github/manifest.json: repositories of
// organizations, then issues by the thousand with their author and labels embedded as GitHub sends
// them, then releases by the thousand with their author), then runs `cds import --from` that folder as a child process on a fresh PostgreSQL database,
// measuring its wall time and peak RSS (VmHWM of /proc/<pid>/status, polled, and GNU time's maximum).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import pg from 'pg';

export interface ImportSize {
  issues: number;
  repositories: number;
  members: number;
  /** Releases, spread over the repositories, each with its author embedded (0: none). */
  releases: number;
}

const PER_FILE = 1000;
const ORGANIZATIONS = 200;
const iso = (n: number) => new Date(Date.UTC(2015, 0, 1) + n * 37_000).toISOString().replace('.000Z', 'Z');

function user(id: number) {
  const login = `user-${id}`;
  return {
    login,
    id: 20_000_000 + id,
    node_id: `MDQ6VXNlcj${id}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${20_000_000 + id}?v=4`,
    gravatar_id: '',
    url: `https://api.github.com/users/${login}`,
    html_url: `https://github.com/${login}`,
    followers_url: `https://api.github.com/users/${login}/followers`,
    repos_url: `https://api.github.com/users/${login}/repos`,
    type: 'User',
    site_admin: false,
  };
}

function repository(r: number) {
  const owner = `org-${r % ORGANIZATIONS}`;
  const name = `repo-${r}`;
  return {
    id: 10_000_000 + r,
    node_id: `MDEwOlJlcG9zaXRvcnk${r}`,
    name,
    full_name: `${owner}/${name}`,
    private: false,
    owner: {
      login: owner,
      id: 90_000_000 + (r % ORGANIZATIONS),
      type: 'Organization',
      url: `https://api.github.com/users/${owner}`,
      html_url: `https://github.com/${owner}`,
    },
    html_url: `https://github.com/${owner}/${name}`,
    description: `Repository number ${r}`,
    fork: false,
    url: `https://api.github.com/repos/${owner}/${name}`,
    homepage: '',
    language: ['Python', 'Go', 'TypeScript'][r % 3],
    forks_count: r % 17,
    stargazers_count: r % 101,
    watchers_count: r % 101,
    open_issues_count: r % 13,
    size: r % 5000,
    default_branch: 'main',
    topics: ['owasp', `topic-${r % 50}`],
    archived: false,
    license: null,
    pushed_at: iso(r + 50_000),
    created_at: iso(r),
    updated_at: iso(r + 100_000),
  };
}

export function issue(i: number, size: ImportSize) {
  const r = i % size.repositories;
  const repo = `org-${r % ORGANIZATIONS}/repo-${r}`;
  const number = Math.floor(i / size.repositories) + 1;
  const api = `https://api.github.com/repos/${repo}`;
  return {
    url: `${api}/issues/${number}`,
    repository_url: api,
    labels_url: `${api}/issues/${number}/labels{/name}`,
    comments_url: `${api}/issues/${number}/comments`,
    events_url: `${api}/issues/${number}/events`,
    html_url: `https://github.com/${repo}/issues/${number}`,
    id: 100_000_000 + i,
    node_id: `MDU6SXNzdWU${i}`,
    number,
    title: `Synthetic issue ${i}: something does not work as expected`,
    user: user(i % size.members),
    labels: [
      {
        id: 50_000_000 + r * 2 + (i % 2),
        node_id: `MDU6TGFiZWw${r}`,
        url: `${api}/labels/${i % 2 ? 'bug' : 'enhancement'}`,
        name: i % 2 ? 'bug' : 'enhancement',
        color: i % 2 ? 'd73a4a' : 'a2eeef',
        default: true,
        description: '',
      },
    ],
    state: i % 10 < 7 ? 'open' : 'closed',
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments: i % 9,
    created_at: iso(i),
    updated_at: iso(i + 1000),
    closed_at: i % 10 < 7 ? null : iso(i + 500),
    author_association: 'CONTRIBUTOR',
    body: 'Steps to reproduce: open the page, click the button. Expected: it works. Actual: it does not. '.repeat(2),
    state_reason: i % 10 < 7 ? null : 'completed',
  };
}

function release(n: number, size: ImportSize) {
  const r = n % size.repositories;
  const repo = `org-${r % ORGANIZATIONS}/repo-${r}`;
  const id = 300_000_000 + n;
  const tag = `v${Math.floor(n / size.repositories) + 1}.0.0`;
  return {
    url: `https://api.github.com/repos/${repo}/releases/${id}`,
    html_url: `https://github.com/${repo}/releases/tag/${tag}`,
    assets_url: `https://api.github.com/repos/${repo}/releases/${id}/assets`,
    id,
    node_id: `MDc6UmVsZWFzZT${n}`,
    tag_name: tag,
    target_commitish: 'main',
    name: `Release ${tag}`,
    draft: false,
    prerelease: n % 7 === 0,
    author: user(n % size.members),
    created_at: iso(n * 3),
    published_at: iso(n * 3 + 10),
    assets: [],
    body: 'Bug fixes and improvements. See the changelog for details.',
  };
}

/**
 * Writes the dataset folder (file by file, never all of it in memory); returns its GitHub file count. `issueOf`: the
 * i-th issue (bench/changes.ts writes a second folder with some of them edited).
 */
export async function writeDataset(
  dir: string,
  size: ImportSize,
  owaspFrom: string,
  issueOf: (i: number, size: ImportSize) => unknown = issue,
): Promise<number> {
  await fs.mkdir(path.join(dir, 'github', 'gen'), { recursive: true });
  await fs.cp(owaspFrom, path.join(dir, 'owasp'), { recursive: true });
  const manifest: { file: string; requests: string[]; shape: string; count: number }[] = [];
  const write = async (file: string, request: string, records: unknown[]) => {
    const out = createWriteStream(path.join(dir, 'github', file));
    out.write('[');
    records.forEach((record, n) => out.write((n ? ',' : '') + JSON.stringify(record)));
    out.end(']');
    await once(out, 'finish');
    manifest.push({ file, requests: [`GET ${request} -> 200`], shape: 'array', count: records.length });
  };
  for (let start = 0; start < size.repositories; start += PER_FILE) {
    const records = [];
    for (let r = start; r < Math.min(size.repositories, start + PER_FILE); r++) records.push(repository(r));
    await write(`gen/repos-${start}.json`, `/orgs/org-${start % ORGANIZATIONS}/repos`, records);
  }
  for (let start = 0; start < size.issues; start += PER_FILE) {
    const records = [];
    for (let i = start; i < Math.min(size.issues, start + PER_FILE); i++) records.push(issueOf(i, size));
    await write(`gen/issues-${start}.json`, `/repositories/${start}/issues`, records);
  }
  for (let start = 0; start < size.releases; start += PER_FILE) {
    const records = [];
    for (let n = start; n < Math.min(size.releases, start + PER_FILE); n++) records.push(release(n, size));
    await write(`gen/releases-${start}.json`, `/repos/org-0/repo-0/releases`, records);
  }
  await fs.writeFile(path.join(dir, 'github', 'manifest.json'), JSON.stringify(manifest));
  return manifest.length;
}

export interface ImportRun {
  seconds: number;
  /** Peak resident memory of the import process (MB): the larger of VmHWM (polled) and GNU time's maximum. */
  peakMb: number;
  exitCode: number | null;
  stdout: string;
}

/** `cds import --from dir` on a fresh database of the server at serverUrl (dropped afterwards unless KEEP). */
export async function runImport(root: string, serverUrl: string, dir: string): Promise<ImportRun> {
  const name = `cds_import_${crypto.randomBytes(5).toString('hex')}`;
  const url = Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString();
  await admin(serverUrl, `CREATE DATABASE ${name}`);
  try {
    // Migrations first (`cds migrate`), so that the import's own time and memory are measured alone.
    const migrate = await run(root, url, ['migrate']);
    if (migrate.exitCode !== 0) throw new Error(`cds migrate failed: ${migrate.stdout}`);
    return await run(root, url, ['import', '--from', dir]);
  } finally {
    if (!process.env.KEEP) await admin(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

/** `cds <args>` (bin/cds.js of `root`) on the database at `url`, under GNU time: wall time and peak RSS. */
export async function run(
  root: string,
  url: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<ImportRun> {
  const timeFile = path.join(os.tmpdir(), `cds-time-${process.pid}-${Date.now()}`);
  const started = performance.now();
  const child = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, process.execPath, 'bin/cds.js', ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, REDIS_URL: '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  // The node process under time: its VmHWM, read until it exits.
  let hwmKb = 0;
  const poll = setInterval(() => void pollHwm(child.pid!).then((kb) => (hwmKb = Math.max(hwmKb, kb))), 200);
  const [exitCode] = (await once(child, 'exit')) as [number | null];
  clearInterval(poll);
  const seconds = (performance.now() - started) / 1000;
  const maxKb = Number((await fs.readFile(timeFile, 'utf8').catch(() => '0')).trim().split('\n').pop());
  await fs.rm(timeFile, { force: true });
  return { seconds, peakMb: Math.max(hwmKb, maxKb || 0) / 1024, exitCode, stdout };
}

async function pollHwm(timePid: number): Promise<number> {
  let best = 0;
  const children = await fs.readFile(`/proc/${timePid}/task/${timePid}/children`, 'utf8').catch(() => '');
  for (const pid of children.trim().split(/\s+/).filter(Boolean)) {
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    best = Math.max(best, kb);
  }
  return best;
}

/** One statement on the server's maintenance connection (CREATE and DROP DATABASE). */
export async function admin(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
