/**
 * The console for browser tests: built from console/ (never a build left over from an earlier
 * run), and Debian's Chromium driven by playwright-core (no browser is downloaded; `.ci/run`
 * installs chromium when missing) in a profile of its own.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CONSOLE_DIR } from '../../src/console/routes.js';
import { PROJECT_ROOT } from '../../src/paths.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function buildConsole(): void {
  execFileSync(
    path.join(PROJECT_ROOT, 'node_modules', '.bin', 'vite'),
    ['build', '--config', 'console/vite.config.ts', '--logLevel', 'error'],
    {
      cwd: PROJECT_ROOT,
      stdio: 'inherit',
    },
  );
  assert.ok(fs.existsSync(path.join(CONSOLE_DIR, 'index.html')));
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /**
   * Content-Security-Policy violations reported so far, by any page of the context: the
   * `securitypolicyviolation` events of each document and the console errors Chromium writes for
   * them (which also cover violations no event reaches, such as a refused frame).
   */
  cspViolations: string[];
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export async function openBrowser(): Promise<Browser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'logquery-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
  const cspViolations: string[] = [];
  await context.exposeBinding('__reportCspViolation', (_source, violation: string) => {
    cspViolations.push(violation);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __reportCspViolation: (v: string) => void }).__reportCspViolation;
      report(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  const watch = (page: Page) =>
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  const first = context.pages()[0];
  if (first) watch(first);
  context.on('page', watch);
  const page = first ?? (await context.newPage());
  return {
    context,
    page,
    cspViolations,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
