/**
 * The console in a real browser: Debian's Chromium driven by playwright-core (no browser is
 * downloaded; `.ci/run` installs chromium when missing). The console is built in `before` from
 * console/ (never a build left over from an earlier run), served by the service on a free port
 * against the test database. Screenshots go to test/console/screenshots/ (gitignored).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http, { type Server } from 'node:http';
import path from 'node:path';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { PROJECT_ROOT } from '../../src/paths.js';
import { CONSOLE_CSP } from '../../src/http/securityHeaders.js';
import { insertEvents } from '../support/db.js';
import { testApp, type TestApp } from '../support/http.js';
import { listenLocally } from '../support/net.js';
import { buildConsole, openBrowser, type Browser } from './browser.js';

const SCREENSHOTS = path.join(PROJECT_ROOT, 'test', 'console', 'screenshots');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const INTERVALS = ['hourly', 'daily', 'minutely', '1hr', '1day', '7day'];

describe('console in the browser', function () {
  this.timeout(120_000);
  let t: TestApp;
  let server: Server;
  let base: string;
  let browser: Browser;
  let page: Page;
  const host = `console${Date.now().toString(36)}.supabase.co`;

  before(async function () {
    this.timeout(240_000);
    buildConsole();
    t = await testApp();
    await insertEvents('cloudflare.logs.prod', requests(host, Date.now()));
    server = http.createServer(t.app);
    ({ base } = await listenLocally(server));
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await openBrowser();
    page = browser.page;
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  // Every page of the console works under its Content-Security-Policy: nothing the browser refused.
  afterEach(() => {
    assert.deepEqual(browser.cspViolations.splice(0), []);
  });

  const shot = (name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

  it('when / is opened, then the console is served with the right types and caching; /api stays JSON', async () => {
    const index = await request(t.app).get('/').expect(200);
    assert.match(index.headers['content-type'], /text\/html/);
    assert.equal(index.headers['cache-control'], 'no-cache');
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(index.text)![1];
    const js = await request(t.app).get(asset).expect(200);
    assert.match(js.headers['content-type'], /javascript/);
    assert.match(js.headers['cache-control'], /max-age=31536000.*immutable|immutable.*max-age=31536000/);
    // Security headers (issue 25, finding 9): the console's policy on its page, no inline script
    // for it to allow, no framing, no sniffing, no referrer; source maps are not published.
    assert.equal(index.headers['content-security-policy'], CONSOLE_CSP);
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/);
    for (const tag of index.text.match(/<script\b[^>]*>/g) ?? []) assert.match(tag, /\ssrc="\/assets\//, `inline script: ${tag}`);
    assert.doesNotMatch(index.text, /<style\b|\sstyle=/);
    assert.equal(index.headers['x-frame-options'], 'DENY');
    assert.equal(index.headers['x-content-type-options'], 'nosniff');
    assert.equal(index.headers['referrer-policy'], 'no-referrer');
    assert.doesNotMatch(js.text, /sourceMappingURL/);
    await request(t.app).get(`${asset}.map`).expect(404);
    await request(t.app)
      .get('/endpoints/usage.api-counts')
      .expect(200)
      .expect('Content-Type', /text\/html/);
    const api = await request(t.app)
      .get('/api/no-such-thing')
      .expect(404)
      .expect('Content-Type', /application\/json/);
    assert.equal(api.body.error.status, 'NOT_FOUND');
    assert.equal(api.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
    assert.equal(api.headers['x-content-type-options'], 'nosniff');
    await request(t.app)
      .get('/assets/no-such-file.js')
      .expect(404)
      .expect('Content-Type', /application\/json/);
  });

  it('when signed in with a key, then the key is in sessionStorage, never in a URL, and endpoints are listed with their settings', async () => {
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    await page.goto(`${base}/`);
    await page.fill('input[name=api_key]', 'wrong-key-000000000000');
    await page.click('button[type=submit]');
    await page.waitForSelector('.signin .error-box');
    await page.fill('input[name=api_key]', t.keys.admin);
    await shot('01-sign-in');
    await page.click('button[type=submit]');
    await page.waitForSelector('tr[data-endpoint="usage.api-counts"]');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('logquery.apiKey')), t.keys.admin);
    assert.ok(!urls.some((u) => u.includes(t.keys.admin)), 'the key is never in a URL');
    const row = await page.textContent('tr[data-endpoint="usage.api-counts"]');
    assert.match(row!, /15 min/); // cache 900 s
    assert.match(row!, /every 5 min/); // warming 300 s
    assert.match(row!, /sql/); // sandboxable
    await shot('02-endpoints');
  });

  for (const interval of INTERVALS) {
    it(`when usage.api-counts runs with interval=${interval}, then the chart and the rows are shown with X-Cache and the time`, async () => {
      await page.goto(`${base}/endpoints/usage.api-counts`);
      await page.selectOption('select[name=interval]', interval);
      await page.fill('input[name=project]', host.replaceAll('.', '\\.'));
      await page.click('button[type=submit]');
      await page.waitForSelector('.outcome .status');
      assert.equal(await page.textContent('.outcome .status'), '200');
      assert.match((await page.textContent('.outcome .x-cache'))!, /X-Cache: (MISS|HIT)/);
      assert.match((await page.textContent('.outcome .time'))!, /^\d+ ms$/);
      const rows = await page.locator('table.results tbody tr').count();
      const api = await request(t.app)
        .get('/api/endpoints/query/usage.api-counts')
        .query({ interval, project: host.replaceAll('.', '\\.') })
        .set('X-API-KEY', t.keys.query)
        .expect(200);
      assert.ok(api.body.result.length > 0);
      assert.equal(rows, api.body.result.length);
      // The DATETIME bucket is shown as a readable UTC date.
      const first = api.body.result[0].timestamp as string;
      assert.equal(await page.textContent('table.results tbody tr:first-child td:first-child'), `${first.replace('T', ' ')} UTC`);
      await page.waitForSelector('.chart canvas');
      assert.equal(await page.getAttribute('.chart', 'data-x'), 'timestamp');
      assert.equal(
        await page.getAttribute('.chart', 'data-series'),
        'total_rest_requests,total_storage_requests,total_auth_requests,total_realtime_requests',
      );
      if (interval === '7day' || interval === '1hr') await shot(`03-usage-${interval}`);
    });
  }

  it('when a sandboxed query has a syntax error, then its line and column are marked in the editor', async () => {
    await page.goto(`${base}/endpoints/logs.all`);
    await page.fill('input[name=project]', 'default');
    const sql = 'select id, timestamp\nfrom edge_logs\nwhere timestamp >\norder by timestamp desc';
    await page.fill('textarea[name=sql]', sql);
    await page.click('button[type=submit]');
    await page.waitForSelector('.sql-error');
    const api = await request(t.app)
      .get('/api/endpoints/query/logs.all')
      .query({ project: 'default', sql })
      .set('X-API-KEY', t.keys.query)
      .expect(400);
    const [, line, column] = /^sql:(\d+):(\d+)$/.exec(api.body.error.errors[0].location)!;
    assert.equal(await page.getAttribute('.sql-error', 'data-line'), line);
    assert.equal(await page.getAttribute('.sql-error', 'data-column'), column);
    assert.equal(await page.locator('.sql-editor .gutter .error-line').textContent(), line);
    // The mark sits on the character at that column of that line.
    const marked = sql.split('\n')[Number(line) - 1].charAt(Number(column) - 1) || ' ';
    assert.equal(await page.textContent('mark.sql-error-mark'), marked);
    await shot('04-sandbox-error');
  });

  it('when an admin creates an endpoint, then a 422 is shown at its position, and once fixed it is saved and runs', async () => {
    await page.goto(`${base}/new-endpoint`);
    await page.fill('input[name=name]', 'console.errors-by-hour');
    await page.fill('input[name=description]', 'Requests per hour of one host');
    const broken =
      'select timestamp_trunc(timestamp, hour) as hour, count(*) as requests\nfrom `cloudflare.logs.prod`\nwhere project = @project\ngroup by hour order by';
    await page.fill('textarea[name=query]', broken);
    await page.fill('input[name=max_rows]', '0');
    await page.click('button[type=submit]');
    await page.waitForSelector('label.invalid input[name=max_rows]');
    assert.match((await page.textContent('label.invalid small.problem'))!, /max_rows must be a whole number from 1/);
    await page.fill('input[name=max_rows]', '500');
    await page.click('button[type=submit]');
    await page.waitForSelector('.sql-error');
    assert.equal(await page.getAttribute('.sql-error', 'data-line'), '4');
    await shot('05-create-422');
    await page.fill('textarea[name=query]', broken + ' hour');
    await page.fill('input[name=cache_duration_seconds]', '60');
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/endpoints/console.errors-by-hour`);
    const saved = await request(t.app).get('/api/endpoints/console.errors-by-hour').set('X-API-KEY', t.keys.admin).expect(200);
    assert.equal(saved.body.max_rows, 500);
    assert.deepEqual(
      saved.body.parameters.map((p: { name: string }) => p.name),
      ['project'],
    );
    await page.fill('input[name=project]', 'default');
    await page.click('button[type=submit]');
    await page.waitForSelector('.outcome .status');
    assert.equal(await page.textContent('.outcome .status'), '200');
    assert.equal(await page.textContent('.outcome .x-cache'), 'X-Cache: MISS');
    await page.click('text=SQL & plan');
    await page.waitForSelector('.plan pre.explain');
    assert.match((await page.textContent('.plan pre.sql'))!, /date_trunc|GROUP BY/i);
    assert.match((await page.textContent('.plan pre.explain'))!, /cost=/);
    await page.click('text=Copy as curl');
    assert.match(
      (await page.textContent('pre.curl'))!,
      /^curl -H "X-API-KEY: \$LOGQUERY_API_KEY" '.*\/api\/endpoints\/query\/console\.errors-by-hour\?project=default'$/,
    );
    await shot('06-created-endpoint');
  });

  it('when a source is opened, then its schema is a tree and its events are counted per day partition', async () => {
    await page.goto(`${base}/sources`);
    await page.click('tr[data-source="cloudflare.logs.prod"] a');
    await page.waitForSelector('.partitions tbody tr');
    assert.ok(await page.locator('ul.tree summary:has-text("metadata")').count());
    const today = new Date().toISOString().slice(0, 10);
    const counts = (await request(t.app).get('/api/sources/cloudflare.logs.prod/partitions').set('X-API-KEY', t.keys.admin).expect(200))
      .body as Array<{ day: string; events: number }>;
    const shown = await page.textContent(`.partitions tr[data-day="${today}"] td.num`);
    assert.equal(shown, counts.find((c) => c.day === today)!.events.toLocaleString('en'));
    await shot('07-source');
  });

  it('when a script is injected into the page, then the policy refuses it and the refusal is reported', async () => {
    // What the afterEach check relies on: a violation is seen. An inline script is refused.
    await page.goto(`${base}/`);
    await page.waitForSelector('#app *');
    const ran = await page.evaluate(async () => {
      const script = document.createElement('script');
      script.textContent = 'window.__injected = true';
      document.body.append(script);
      await new Promise((r) => setTimeout(r, 100));
      return (window as unknown as { __injected?: boolean }).__injected === true;
    });
    assert.equal(ran, false);
    await page.waitForTimeout(200);
    const reported = browser.cspViolations.splice(0);
    assert.ok(
      reported.some((v) => /script-src/.test(v)),
      reported.join('\n') || 'no violation reported',
    );
  });

  it('when a page of another origin frames the console, then the browser refuses the frame', async () => {
    const framing = http.createServer((_req, res) => res.end(`<!doctype html><iframe name="console" src="${base}/"></iframe>`));
    const { base: other } = await listenLocally(framing);
    try {
      const framed = await browser.context.newPage();
      await framed.goto(other, { waitUntil: 'domcontentloaded' });
      // Chromium reports the refusal on the console of the framing page.
      for (let i = 0; i < 50 && !browser.cspViolations.length; i++) await framed.waitForTimeout(100);
      const frame = framed.frame({ name: 'console' });
      const loaded = frame ? await frame.evaluate(() => document.querySelector('#app') !== null).catch(() => false) : false;
      assert.equal(loaded, false, 'the console loaded in a frame of another origin');
      await framed.close();
      const reported = browser.cspViolations.splice(0);
      assert.ok(
        reported.some((v) => /frame-ancestors/.test(v)),
        reported.join('\n') || 'no refusal reported',
      );
    } finally {
      await new Promise((resolve) => framing.close(resolve));
    }
  });

  it('when signed in with a query key, then endpoints can be run but management is not offered', async () => {
    await page.evaluate(() => sessionStorage.clear());
    await page.goto(`${base}/`);
    await page.fill('input[name=api_key]', t.keys.query);
    await page.click('button[type=submit]');
    await page.waitForSelector('tr[data-endpoint="logs.all"]');
    assert.equal(await page.locator('nav a:has-text("Sources")').count(), 0);
    assert.equal(await page.locator('nav a:has-text("New endpoint")').count(), 0);
    // logs.all answers TIMESTAMP microseconds and records: shown as UTC dates, records folded until opened.
    await page.click('tr[data-endpoint="logs.all"] a');
    await page.fill('input[name=project]', 'console');
    await page.click('button[type=submit]');
    await page.waitForSelector('table.results tbody tr');
    const api = await request(t.app)
      .get('/api/endpoints/query/logs.all')
      .query({ project: 'console' })
      .set('X-API-KEY', t.keys.query)
      .expect(200);
    const first = api.body.result[0] as { timestamp: number };
    const columns = await page.locator('table.results th').allTextContents();
    const cell = await page.locator('table.results tbody tr:first-child td').nth(columns.indexOf('timestamp')).textContent();
    assert.equal(
      cell,
      new Date(first.timestamp / 1000)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.000Z$|Z$/, '') + ' UTC',
    );
    const record = page.locator('table.results tbody tr:first-child details.record');
    assert.equal(await record.locator('pre').isVisible(), false);
    await record.locator('summary').click();
    assert.match((await record.locator('pre').textContent())!, /"request"/);
    assert.equal(await page.locator('.chart').count(), 0, 'no numeric column: no chart');
    await shot('08-logs-all');
  });
});

/** Edge requests of one host over the last week, denser in the last hour, for every interval to have buckets. */
function requests(host: string, now: number): object[] {
  const paths = ['/rest/v1/orders', '/storage/v1/object/a.png', '/auth/v1/token', '/realtime/v1/websocket', '/rest/v1/rpc/stats'];
  const times: number[] = [];
  for (let m = 1; m < 58; m += 1) for (let k = 0; k < 1 + ((m * 7) % 5); k++) times.push(now - m * MINUTE - k * 1000);
  for (let h = 1; h < 24; h++) for (let k = 0; k < 3 + ((h * 5) % 7); k++) times.push(now - h * HOUR - k * MINUTE);
  for (let d = 1; d < 7; d++) for (let k = 0; k < 10 + d * 3; k++) times.push(now - d * DAY - k * 5 * MINUTE);
  return times.map((at, i) => {
    const p = paths[(i * 3 + Math.floor(i / 7)) % paths.length];
    return {
      timestamp: new Date(at).toISOString(),
      event_message: `GET | 200 | ${p}`,
      project: 'console',
      metadata: { request: { path: p, url: `https://${host}${p}`, host, method: 'GET' }, response: { status_code: 200 } },
    };
  });
}
