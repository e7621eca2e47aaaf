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
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
