/**
 * The logs explorer in a real browser (Debian's Chromium, playwright-core; as
 * test/console/console.test.ts): type LQL, see the histogram and the rows, narrow the range on
 * the histogram, open an event, load older rows, get a chart for c:, keep the key out of URLs;
 * live tail: exactly the new matching events within 2 s, pause and resume, at most TAIL_KEEP rows.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http, { type Server } from 'node:http';
import path from 'node:path';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { TAIL_KEEP } from '../../console/src/explorer/tailLimits.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { testApp, type TestApp, withKey } from '../support/http.js';
import { listenLocally } from '../support/net.js';
import { buildConsole, openBrowser, type Browser } from './browser.js';

const SCREENSHOTS = path.join(PROJECT_ROOT, 'test', 'console', 'screenshots');

describe('console: the logs explorer in the browser', function () {
  this.timeout(120_000);
  let t: TestApp;
  let server: Server;
  let base: string;
  let browser: Browser;
  let page: Page;
  const source = `explorer.test.${Date.now().toString(36)}`;
  const urls: string[] = [];
  const now = Date.now();
  // 130 error events over the last 50 minutes (more than a page), and 20 others.
  const events = [
    ...Array.from({ length: 130 }, (_, i) => ({
      message: `GET /api/${i} 500 error`,
      timestamp: new Date(now - (50 - (i * 50) / 130) * 60_000).toISOString(),
      metadata: { status: 500, path: `/api/${i}` },
    })),
    ...Array.from({ length: 20 }, (_, i) => ({
      message: `GET /ok/${i} 200`,
      timestamp: new Date(now - (40 - i) * 60_000).toISOString(),
      metadata: { status: 200, path: `/ok/${i}` },
    })),
  ];

  before(async function () {
    this.timeout(240_000);
    buildConsole();
    t = await testApp();
    await withKey(t.app, t.keys.admin).post('/api/sources', { name: source }).expect(201);
    await request(t.app).post(`/api/logs?source_name=${source}`).set('X-API-KEY', t.keys.ingest).send(events).expect(200);
    server = http.createServer(t.app);
    ({ base } = await listenLocally(server));
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await openBrowser();
    page = browser.page;
    page.on('request', (r) => urls.push(r.url()));
    await page.goto(`${base}/`);
    await page.fill('input[name=api_key]', t.keys.admin);
    await page.click('button[type=submit]');
    await page.waitForSelector('tr[data-endpoint]');
  });

  // The pages work under the console's Content-Security-Policy (test/console/console.test.ts).
  afterEach(() => {
    assert.deepEqual(browser.cspViolations.splice(0), []);
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    if (t) await withKey(t.app, t.keys.admin).delete(`/api/sources/${source}`);
  });

  const rowCount = () => page.locator('tr.event').count();

  it('when LQL is typed, then the histogram and the newest matching rows show, and scrolling loads older ones', async () => {
    await page.goto(`${base}/sources/${encodeURIComponent(source)}/search`);
    await page.waitForSelector('.histogram[data-total]');
    await page.fill('input[name=lql]', 'm.st');
    assert.ok(await page.locator('button.hint', { hasText: 'm.status' }).count(), 'the schema field is hinted');
    await page.click('button.hint >> text=m.status');
    assert.ok(await page.locator('button.hint', { hasText: 'm.status:>=' }).count(), 'operators are hinted for a complete field');
    await page.fill('input[name=lql]', 'error m.status:>=500');
    await page.click('form.lql-form button[type=submit]');
    await page.waitForSelector('.histogram[data-total="130"]');
    assert.equal(await rowCount(), 100);
    const first = await page.textContent('tr.event td:nth-child(2)');
    assert.equal(first, 'GET /api/129 500 error');
    await page.locator('.explorer .more').scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelectorAll('tr.event').length === 130);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'explorer-01-search.png'), fullPage: true });
    assert.match(page.url(), /lql=error\+m\.status%3A%3E%3D500/);
  });

  it('when a range is dragged on the histogram, then the search narrows to it', async () => {
    const over = page.locator('.histogram .u-over');
    await over.scrollIntoViewIfNeeded();
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.95, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => new URL(location.href).searchParams.has('start'));
    const url = new URL(page.url());
    const [start, end] = [Date.parse(url.searchParams.get('start')!), Date.parse(url.searchParams.get('end')!)];
    const inRange = events.filter(
      (e) => e.message.includes('error') && Date.parse(e.timestamp) >= start && Date.parse(e.timestamp) < end,
    ).length;
    assert.ok(inRange > 0 && inRange < 130, `${inRange} events in the dragged range`);
    await page.waitForSelector(`.histogram[data-total="${inRange}"]`);
    assert.equal(await rowCount(), Math.min(100, inRange));
  });

  it('when a row is clicked, then the whole event opens', async () => {
    await page.click('tr.event >> nth=0');
    const detail = JSON.parse((await page.textContent('tr.event-detail pre'))!);
    assert.equal(detail.metadata[0].status, 500);
    assert.match(detail.event_message, /error/);
    assert.ok(detail.id);
  });

  it('when the LQL has c:, then a chart is drawn; when it is wrong, the column is marked', async () => {
    await page.goto(
      `${base}/sources/${encodeURIComponent(source)}/search?lql=${encodeURIComponent('c:count(*) c:group_by(t::minute)')}&range=1h`,
    );
    await page.waitForSelector('.explorer .chart canvas');
    await page.fill('input[name=lql]', 'error m.nope:1');
    await page.click('form.lql-form button[type=submit]');
    await page.waitForSelector('.error-box[data-column="7"]');
    assert.ok(!urls.some((u) => u.includes(t.keys.admin)), 'the key is never in a URL');
  });

  const ingest = async (batch: object[]) => {
    const res = await fetch(`${base}/api/logs?source_name=${source}`, {
      method: 'POST',
      headers: { 'X-API-KEY': t.keys.ingest, 'Content-Type': 'application/json' },
      body: JSON.stringify(batch),
    });
    assert.equal(res.status, 200, await res.text());
  };
  const liveMessages = () => page.locator('tr.event.live td:nth-child(2)').allTextContents();

  it('when live tail runs and 5 matching and 5 other events are ingested, then exactly the 5 appear within 2 s, newest first', async () => {
    await page.goto(`${base}/sources/${encodeURIComponent(source)}/search?lql=${encodeURIComponent('error m.status:>=500')}&range=1h`);
    await page.waitForSelector('.histogram[data-total="130"]');
    await page.click('button.tail-start');
    await page.waitForSelector('.tail-status[data-state="live"]');
    assert.equal(await rowCount(), 100, 'the search rows stay under the new ones');
    // Ten requests at once, one event each, times in order; the 2 s run from their acknowledgement.
    const at = Date.now();
    await Promise.all(
      Array.from({ length: 5 }, (_, i) => [
        ingest([{ message: `tail ${i} error`, timestamp: new Date(at + 2 * i).toISOString(), metadata: { status: 503 } }]),
        // Not matching: no "error", or a status under 500.
        ingest([
          {
            message: i % 2 ? `tail other ${i}` : `tail other ${i} error`,
            timestamp: new Date(at + 2 * i + 1).toISOString(),
            metadata: { status: i % 2 ? 500 : 200 },
          },
        ]),
      ]).flat(),
    );
    await page.waitForFunction(() => document.querySelectorAll('tr.event.live').length >= 5, undefined, { timeout: 2000 });
    // Another second: a non-matching row would have come with the next query by then.
    await page.waitForTimeout(1200);
    assert.deepEqual(await liveMessages(), ['tail 4 error', 'tail 3 error', 'tail 2 error', 'tail 1 error', 'tail 0 error']);
    assert.equal(await rowCount(), 105);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'explorer-02-live-tail.png'), fullPage: true });
  });

  it('when live tail is paused, then nothing new shows until it is resumed', async () => {
    await page.click('button.tail-pause');
    await page.waitForSelector('.tail-status[data-state="paused"]');
    await ingest([{ message: 'while paused error', metadata: { status: 500 } }]);
    await page.waitForTimeout(1500);
    assert.equal((await liveMessages()).length, 5);
    await page.click('button.tail-resume');
    await page.waitForSelector('.tail-status[data-state="live"]');
    await ingest([{ message: 'after resume error', metadata: { status: 500 } }]);
    await page.waitForFunction(() => document.querySelectorAll('tr.event.live').length === 6);
    assert.equal((await liveMessages())[0], 'after resume error');
  });

  it(`when more events arrive than the page keeps, then it keeps the newest ${TAIL_KEEP} rows and says so`, async () => {
    const from = Date.now() - 1000;
    const burst = Array.from({ length: TAIL_KEEP + 50 }, (_, i) => ({
      message: `burst ${i} error`,
      timestamp: new Date(from + i).toISOString(),
      metadata: { status: 500 },
    }));
    await ingest(burst);
    await page.waitForFunction(
      (n) => document.querySelector('tr.event.live td:nth-child(2)')?.textContent === `burst ${n - 1} error`,
      TAIL_KEEP + 50,
    );
    assert.equal(await rowCount(), TAIL_KEEP);
    const status = (await page.textContent('.tail-status'))!;
    assert.match(status, new RegExp(`Keeps the newest ${TAIL_KEEP} rows \\(\\d+ older left the page\\)`));
    await page.click('button.tail-stop');
    await page.waitForSelector('button.tail-start');
    assert.ok(!urls.some((u) => u.includes(t.keys.admin)), 'the key is never in a URL');
  });
});
