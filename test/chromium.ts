// Debian's Chromium for the browser tests, through playwright-core: never a browser a tool downloads.
import { existsSync } from 'node:fs';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildTestApp, type TestApp } from './app.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Launches Chromium with the standard arguments (plus `extraArgs`); a missing Chromium fails naming the package. */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install Debian's "chromium" package (\`apt-get install chromium\`). This test never downloads a browser.`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

const SHARED = Symbol.for('cds-test-chromium');

/**
 * The browser of a test file, given back with releaseChromium. Under `npm test` one Chromium serves every browser file
 * a worker process runs (test/runner/group.js closes it after the worker's last file): a launch costs ~1.9 s of CPU.
 */
export async function openChromium(): Promise<Browser> {
  // (--disable-quic: no attempt at QUIC towards the hosts a page names; every such request is refused anyway.)
  if (!process.env.CDS_TEST_BUILD) return launchChromium(['--disable-quic']);
  const shared = globalThis as { [SHARED]?: Promise<Browser> };
  const browser = await shared[SHARED]?.catch(() => undefined);
  if (browser?.isConnected()) return browser;
  shared[SHARED] = launchChromium(['--disable-quic']);
  return shared[SHARED];
}

/** Closes every context the file opened; the browser itself too when the file runs alone (not shared). */
export async function releaseChromium(browser: Browser | undefined): Promise<void> {
  if (!process.env.CDS_TEST_BUILD) return browser?.close();
  await Promise.all((browser?.contexts() ?? []).map((context) => context.close()));
}

/** What a browser test file works with: the app served on a free port of 127.0.0.1, and the file's Chromium. */
export interface Served {
  t: TestApp;
  browser: Browser;
  origin: string;
}

/** Registers the file's hooks that serve the app (built with `options`) to Chromium; the fields are set from `before` on. */
export function servedToChromium(options: Parameters<typeof buildTestApp>[0]): Served {
  const served: Partial<Served> = {};
  before(async () => {
    served.t = await buildTestApp(options);
    served.origin = await served.t.app.listen({ port: 0, host: '127.0.0.1' });
    served.browser = await openChromium();
  });
  after(async () => {
    await releaseChromium(served.browser);
    await served.t?.close();
  });
  return served as Served;
}

/** Offline but for our server: every request to another origin is failed, and its address recorded in the array returned. */
export async function onlyOrigin(context: BrowserContext, origin: string): Promise<string[]> {
  const outside: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    outside.push(url);
    return route.abort('internetdisconnected');
  });
  return outside;
}

/** Script errors, console errors and CSP refusals of the page, collected in the array returned. */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content Security Policy|Refused to/i.test(message.text()))
      problems.push(message.text());
  });
  return problems;
}
