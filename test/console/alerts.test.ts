/**
 * The console's alert pages in a real browser (Debian's Chromium through playwright-core, as
 * test/console/console.test.ts): create an alert with the form, see the rows "Test now" would
 * send, run it and see the run in its history, delivered to a receiver on loopback.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http, { type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CONSOLE_DIR } from '../../src/console/routes.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { insertEvents } from '../support/db.js';
import { listenLocally } from '../support/net.js';
import { alertTestApp, type AlertTestApp } from '../alerts/support.js';
import { Receiver } from '../alerts/receiver.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('console in the browser: alerts', function () {
  this.timeout(120_000);
  let t: AlertTestApp;
  let server: Server;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  const mark = `console-alert-${Date.now()}`;

  before(async function () {
    this.timeout(240_000);
    execFileSync(
      path.join(PROJECT_ROOT, 'node_modules', '.bin', 'vite'),
      ['build', '--config', 'console/vite.config.ts', '--logLevel', 'error'],
      {
        cwd: PROJECT_ROOT,
        stdio: 'inherit',
      },
    );
    assert.ok(fs.existsSync(path.join(CONSOLE_DIR, 'index.html')));
    t = await alertTestApp();
    receiver = await Receiver.start();
    await insertEvents('postgres.logs', [{ event_message: mark }, { event_message: mark }]);
    server = http.createServer(t.app);
    ({ base } = await listenLocally(server));
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'logquery-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
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
    page = browser.pages()[0] ?? (await browser.newPage());
  });

  after(async () => {
    await browser?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await receiver?.close();
    await t?.close();
  });

  it('when an admin creates an alert, tests its query and runs it, then the rows show and the run is in its history', async () => {
    await page.goto(`${base}/`);
    await page.fill('input[name=api_key]', t.admin);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav a[href="/alerts"]');
    await page.click('nav a[href="/alerts"]');
    await page.click('a[href="/new-alert"]');
    await page.fill('input[name=name]', 'console alert');
    await page.fill('textarea[name=query]', `select event_message from \`postgres.logs\` where event_message = '${mark}'`);
    await page.fill('input[name=cron]', 'every minute');
    await page.fill('input[name=webhook_notification_url]', receiver.url('/console'));
    await page.click('button[name=test]');
    await page.waitForSelector('.preview h3');
    assert.match((await page.textContent('.preview h3'))!, /^2 rows would be sent/);
    assert.match((await page.textContent('.preview'))!, new RegExp(mark));
    assert.equal(receiver.received.length, 0, 'testing sends nothing');
    // A bad cron: the 422 is shown at the field.
    await page.click('button[name=save]');
    await page.waitForSelector('small.problem');
    assert.match((await page.textContent('small.problem'))!, /^cron/);
    await page.fill('input[name=cron]', '*/5 * * * *');
    await page.click('button[name=save]');
    await page.waitForURL(`${base}/alerts/console%20alert`);
    await page.waitForSelector('button[name=run]');
    await page.click('button[name=run]');
    await page.waitForSelector('tr[data-outcome=fired]');
    const row = (await page.textContent('tr[data-outcome=fired]'))!;
    assert.match(row, /manual/);
    assert.match(row, /delivered/);
    assert.equal(receiver.delivered.length, 1);
    await page.click('nav a[href="/alerts"]');
    await page.waitForSelector('tr[data-alert="console alert"]');
    assert.match((await page.textContent('tr[data-alert="console alert"]'))!, /\*\/5 \* \* \* \*.*webhook/);
  });
});
