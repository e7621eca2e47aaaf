/**
 * The console's alert pages in a real browser (Debian's Chromium through playwright-core, as
 * test/console/console.test.ts): create an alert with the form, see the rows "Test now" would
 * send, run it and see the run in its history, delivered to a receiver on loopback.
 */
import assert from 'node:assert/strict';
import http, { type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { insertEvents } from '../support/db.js';
import { listenLocally } from '../support/net.js';
import { alertTestApp, type AlertTestApp } from '../alerts/support.js';
import { Receiver } from '../alerts/receiver.js';
import { buildConsole, openBrowser, type Browser } from './browser.js';

describe('console in the browser: alerts', function () {
  this.timeout(120_000);
  let t: AlertTestApp;
  let server: Server;
  let base: string;
  let browser: Browser;
  let page: Page;
  let receiver: Receiver;
  const mark = `console-alert-${Date.now()}`;

  before(async function () {
    this.timeout(240_000);
    buildConsole();
    t = await alertTestApp();
    receiver = await Receiver.start();
    await insertEvents('postgres.logs', [{ event_message: mark }, { event_message: mark }]);
    server = http.createServer(t.app);
    ({ base } = await listenLocally(server));
    browser = await openBrowser();
    page = browser.page;
  });

  // The pages work under the console's Content-Security-Policy (test/console/console.test.ts).
  afterEach(() => {
    assert.deepEqual(browser.cspViolations.splice(0), []);
  });

  after(async () => {
    await browser?.close();
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
