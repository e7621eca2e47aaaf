import assert from 'node:assert/strict';
import http, { type IncomingMessage } from 'node:http';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { AppError } from '../../src/errors.js';
import { createHttpServer } from '../../src/http/server.js';
import type { Exchange, PipelineStep } from '../../src/http/pipeline.js';
import { testApp, withKey, type TestApp } from '../support/http.js';
import { listenLocally } from '../support/net.js';

/**
 * The request pipeline (src/http/pipeline.ts) behind the service's one front door (createApp is
 * a node listener): a step in the list runs once for every request, whether a cache hit is
 * answered by the fast path before Express or the request goes through Express; a step that
 * refuses a request gets the error envelope, served by createHttpServer or by a plain
 * http.createServer alike.
 */
describe('the request pipeline', function () {
  this.timeout(30_000);
  const tag = `pipe${Date.now().toString(36)}`;
  const name = `pipeline.${tag}`;
  const hitPath = `/api/endpoints/query/${name}?project=${tag}`;
  let t: TestApp;
  /** What the test step saw, one entry per run: the request id, the URL, and whether Express had the request when it was answered. */
  let seen: Array<{ id: string; url: string; viaExpress: boolean }> = [];
  const servers: Record<'served' | 'app', { server?: http.Server; base: string }> = { served: { base: '' }, app: { base: '' } };

  /** The test's step: records each request, refuses one that asks for it (after a tick, as a step waiting on Redis would). */
  const recording: PipelineStep = {
    name: 'test recorder',
    run(exchange: Exchange) {
      exchange.res.once('finish', () => {
        // Express gives every request it handles its own prototype (with `app`); the fast path's never get one.
        const viaExpress = (exchange.req as IncomingMessage & { app?: unknown }).app !== undefined;
        seen.push({ id: exchange.id, url: exchange.req.url!, viaExpress });
      });
      if (exchange.req.headers['x-test-refuse'] === 'sync') throw new AppError(429, 'RESOURCE_EXHAUSTED', 'Refused by the test step.');
      if (exchange.req.headers['x-test-refuse'] === 'async')
        return new Promise((_resolve, reject) => setImmediate(() => reject(new AppError(429, 'RESOURCE_EXHAUSTED', 'Refused later.'))));
      return undefined;
    },
  };

  async function metric(route: string, status: string): Promise<number> {
    const text = (await request(t.app).get('/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`logquery_http_requests_total{route="${route}",status="${status}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  const get = (via: keyof typeof servers, path: string, headers: Record<string, string> = {}) =>
    fetch(servers[via].base + path, { headers: { 'X-API-KEY': t.keys.query, ...headers } });

  before(async () => {
    t = await testApp();
    await withKey(t.app, t.keys.admin)
      .post('/api/endpoints', {
        name,
        query: 'select count(*) as n from `cloudflare.logs.prod` where project = @project',
        parameters: [{ name: 'project', required: true }],
        cache_duration_seconds: 600,
      })
      .expect(201);
    const app = await createApp(t.context, { steps: [recording] });
    for (const [via, server] of [
      ['served', createHttpServer(app)],
      ['app', http.createServer(app)],
    ] as const) {
      servers[via] = { server, base: (await listenLocally(server)).base };
    }
    await get('served', hitPath); // the miss: from now on the endpoint's result is cached
  });
  beforeEach(() => {
    seen = [];
  });
  after(async () => {
    for (const { server } of Object.values(servers)) await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await withKey(t.app, t.keys.admin).delete(`/api/endpoints/${name}`);
  });

  it('when a step is in the list, then it runs once for a cache hit answered before Express and once for an ordinary request', async () => {
    const hit = await get('served', hitPath);
    assert.equal(hit.status, 200);
    assert.equal(hit.headers.get('x-cache'), 'HIT');
    const ordinary = await get('served', `/api/endpoints/query/${name}?project=${tag}&project=twice`); // 400 from the route
    assert.equal(ordinary.status, 400);
    const hitThroughApp = await get('app', hitPath);
    assert.equal(hitThroughApp.headers.get('x-cache'), 'HIT');
    assert.deepEqual(
      seen.map((s) => [s.url, s.viaExpress]),
      [
        [hitPath, false],
        [`/api/endpoints/query/${name}?project=${tag}&project=twice`, true],
        [hitPath, false], // one front door: a plain http.createServer of the app answers hits before Express too
      ],
    );
    assert.deepEqual(
      seen.map((s) => s.id),
      [hit, ordinary, hitThroughApp].map((r) => r.headers.get('x-request-id')),
    );
  });

  it('when a request has no X-Request-Id, then each answer has a new one; a sane incoming one is echoed, anything else replaced', async () => {
    const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const via of ['served', 'app'] as const) {
      const ids = [];
      for (const path of [hitPath, '/api/endpoints/query/no-such-endpoint', '/health']) {
        const res = await get(via, path);
        ids.push(res.headers.get('x-request-id'));
      }
      for (const id of ids) assert.match(id!, UUID);
      assert.equal(new Set(ids).size, ids.length);
      for (const path of [hitPath, '/health']) {
        assert.equal((await get(via, path, { 'X-Request-Id': 'trace-01:ab/cd=' })).headers.get('x-request-id'), 'trace-01:ab/cd=');
        for (const bad of ['two words', 'x'.repeat(129), 'quote"d']) {
          assert.match((await get(via, path, { 'X-Request-Id': bad })).headers.get('x-request-id')!, UUID);
        }
      }
    }
  });

  it('when requests are answered, then the HTTP metrics count each once, fast-path hits included', async () => {
    const route = '/api/endpoints/query/:idOrName';
    for (const via of ['served', 'app'] as const) {
      const hits = await metric(route, '200');
      const health = await metric('/health', '200');
      const unmatched = await metric('unmatched', '404');
      for (let i = 0; i < 3; i++) assert.equal((await get(via, hitPath)).headers.get('x-cache'), 'HIT');
      await get(via, '/health');
      await get(via, '/no/such/route');
      assert.equal(await metric(route, '200'), hits + 3, via);
      assert.equal(await metric('/health', '200'), health + 1, via);
      assert.equal(await metric('unmatched', '404'), unmatched + 1, via);
    }
  });

  it('when a step refuses a request, at once or after waiting, then the error envelope answers it on both ways in and nothing runs after', async () => {
    for (const via of ['served', 'app'] as const) {
      for (const refuse of ['sync', 'async']) {
        const before = await metric('unmatched', '429');
        for (const path of [hitPath, '/api/endpoints/query/no-such-endpoint']) {
          const res = await get(via, path, { 'X-Test-Refuse': refuse });
          assert.equal(res.status, 429, `${via} ${refuse} ${path}`);
          const body = await res.json();
          assert.equal(body.error.code, 429);
          assert.equal(body.error.status, 'RESOURCE_EXHAUSTED');
          assert.equal(res.headers.get('x-cache'), null); // the query route never ran
          assert.ok(res.headers.get('x-request-id')); // the steps before it did
        }
        assert.equal(await metric('unmatched', '429'), before + 2, `${via} ${refuse}`);
      }
    }
  });
});
