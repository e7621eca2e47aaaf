/**
 * An endpoint embedded in a web page of another origin, in a real browser (Debian's Chromium
 * driven by playwright-core, as test/console/console.test.ts does): the page calls a public
 * endpoint and a keyed one (the key in a header, so the browser preflights), and the browser
 * refuses it the management API, which sends no CORS header (docs/API.md, "CORS").
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http, { type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import request from 'supertest';
import { createHttpServer } from '../../src/http/server.js';
import { testApp, type TestApp } from '../support/http.js';
import { listenLocally } from '../support/net.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const tag = `xo${Date.now().toString(36)}`;

describe('an endpoint called from a page of another origin, in the browser', function () {
  this.timeout(120_000);
  let t: TestApp;
  let api: Server;
  let site: Server;
  let apiBase: string;
  let siteBase: string;
  let profile: string;
  let browser: BrowserContext;

  before(async function () {
    this.timeout(180_000);
    t = await testApp();
    await request(t.app)
      .post('/api/logs?source_name=postgres.logs')
      .set('X-API-KEY', t.keys.admin)
      .send([
        { event_message: 'a', project: tag },
        { event_message: 'b', project: tag },
        { event_message: 'c', project: tag },
      ])
      .expect(200);
    for (const [name, enableAuth] of [
      ['public', false],
      ['keyed', true],
    ] as const) {
      await request(t.app)
        .post('/api/endpoints')
        .set('X-API-KEY', t.keys.admin)
        .send({
          name: `${tag}.${name}`,
          query: 'select count(*) as n from `postgres.logs` where project = @project',
          enable_auth: enableAuth,
          cache_duration_seconds: 60,
        })
        .expect(201);
    }
    api = createHttpServer(t.app);
    ({ base: apiBase } = await listenLocally(api));
    // The other origin: another port is another origin (scheme, host and port).
    site = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>embedding page</title><p id="out">…</p>');
    });
    ({ base: siteBase } = await listenLocally(site));
    assert.notEqual(new URL(apiBase).origin, new URL(siteBase).origin);
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'logquery-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--no-first-run', '--disable-sync'],
    });
  });

  after(async () => {
    await browser?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
    for (const server of [api, site]) await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    for (const name of ['public', 'keyed']) await request(t.app).delete(`/api/endpoints/${tag}.${name}`).set('X-API-KEY', t.keys.admin);
  });

  it('when the page calls endpoints, then it reads their rows; when it calls the management API, then the browser refuses it', async () => {
    const page = browser.pages()[0] ?? (await browser.newPage());
    await page.goto(siteBase + '/');
    // The page's script as text: the test's own functions are compiled with helpers the page lacks.
    const script = `(async () => {
      const read = async (url, init) => {
        try {
          const res = await fetch(url, init);
          return { status: res.status, body: await res.json(), cache: res.headers.get('X-Cache') };
        } catch (err) {
          return { refused: String(err) };
        }
      };
      const api = ${JSON.stringify(apiBase)};
      return {
        public: await read(api + '/api/endpoints/query/${tag}.public?project=${tag}'),
        keyed: await read(api + '/api/endpoints/query/${tag}.keyed?project=${tag}', { headers: { 'X-API-KEY': ${JSON.stringify(t.keys.query)} } }),
        management: await read(api + '/api/endpoints', { headers: { 'X-API-KEY': ${JSON.stringify(t.keys.admin)} } }),
        managementSimple: await read(api + '/api/endpoints?api_key=${t.keys.admin}'),
        origin: location.origin,
      };
    })()`;
    const outcome = await page.evaluate<Record<string, { refused?: string } | string>>(script);
    assert.equal(outcome.origin, new URL(siteBase).origin);
    assert.deepEqual(outcome.public, { status: 200, body: { result: [{ n: 3 }] }, cache: 'MISS' });
    assert.deepEqual(outcome.keyed, { status: 200, body: { result: [{ n: 3 }] }, cache: 'MISS' });
    // With a key header the browser preflights, and the management route answers no CORS: refused.
    assert.match(
      (outcome.management as { refused?: string }).refused ?? '',
      /TypeError: Failed to fetch/,
      JSON.stringify(outcome.management),
    );
    // Even a simple request (key in the URL, no preflight) reaches the server but its answer is withheld from the page.
    assert.match(
      (outcome.managementSimple as { refused?: string }).refused ?? '',
      /TypeError: Failed to fetch/,
      JSON.stringify(outcome.managementSimple),
    );
  });
});
