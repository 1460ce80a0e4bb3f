// Test tier: system (starts the server as a process): `npm run test:system`, CI.
// Webhooks in the server process (server.ts starts the deliveries): the warning of WEBHOOKS_ALLOW_PRIVATE at start, and
// a change made by a real sync (`cds sync owasp` from a changed copy of the website's files) delivered to a webhook
// registered over GraphQL, verified with standardwebhooks; the secret never in the server's output.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestDb, seedDataDir, type TestDatabase } from './helpers.ts';
import { exited, freePort, ROOT, runCli, startServer, waitFor200 } from './process.ts';
import { graphqlOver } from './auth.ts';
import { startReceiver, verify } from './webhook-receiver.ts';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test(
  'a sync in the server reaches a webhook registered over GraphQL; WEBHOOKS_ALLOW_PRIVATE warns at start',
  { timeout: 180_000 },
  async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cds-webhooks-server-'));
    cleanups.push(() => fs.rm(tmp, { recursive: true, force: true }));
    const dataDir = path.join(tmp, 'data');
    let database: TestDatabase | undefined;
    if (process.env.DATABASE_URL) {
      database = await createTestDb({ importBundled: true });
      cleanups.push(() => database!.drop());
    } else await seedDataDir(dataDir, 'bundled');
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const port = await freePort();
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: database?.url,
      PORT: String(port),
      AUTO_IMPORT: 'false',
      AUTH_DEV_LOGIN: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_SECRETS_KEY: 'server-test-webhook-secrets-key-0123456789',
    };
    const base = `http://127.0.0.1:${port}`;
    const server = startServer(env);
    try {
      await waitFor200(`${base}/status/`, 120_000);
      assert.match(server.output(), /WEBHOOKS_ALLOW_PRIVATE=true: webhooks may be sent over http/);

      const signIn = await fetch(`${base}/auth/dev/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ login: 'hook-owner' }),
      });
      const cookies = signIn.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const session = { cookies, csrf: /csrftoken=([^;]+)/.exec(cookies)![1]! };
      const { data } = await graphqlOver<{ createWebhook: { secret: string } }>(
        base,
        session,
        'mutation ($url: String!) { createWebhook(url: $url, types: ["chapter.deleted"]) { secret } }',
        { url: `${receiver.url}/1` },
      );
      const { secret } = data.createWebhook;

      // The website's files without London: the sync makes the chapter inactive (it leaves the list).
      const owasp = path.join(tmp, 'owasp-files');
      await fs.cp(path.join(ROOT, 'data', 'owasp'), owasp, { recursive: true });
      const file = path.join(owasp, 'chapters.json');
      const chapters = JSON.parse(await fs.readFile(file, 'utf8')) as { url: string }[];
      await fs.writeFile(file, JSON.stringify(chapters.filter((c) => !c.url.endsWith('/www-chapter-london/'))));
      const synced = await runCli(['sync', 'owasp', '--from', owasp, '--json'], env);
      assert.equal(synced.code, 0, synced.stderr);

      await receiver.waitFor(1);
      const [delivery] = receiver.received;
      assert.equal(delivery!.json.type, 'chapter.deleted');
      assert.equal(delivery!.json.data.key, 'london');
      verify(secret, delivery!);
      assert.ok(!server.output().includes(secret.slice(6)), 'the secret is in no line the server wrote');
    } finally {
      server.kill('SIGTERM');
    }
    assert.equal(await exited(server), 0, server.output());
  },
);
