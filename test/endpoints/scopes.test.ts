/**
 * Public endpoints, CORS and keys limited to one endpoint or source (docs/API.md, "Public
 * endpoints", "CORS", "Authentication"), route by route: the ordinary query route and its GET
 * fast path, POST, the legacy paths, ingest (JSON and OTLP), and the management routes.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { generateKey } from '../../src/auth/keys.js';
import { createHttpServer } from '../../src/http/server.js';
import { testApp, type TestApp } from '../support/http.js';
import { listenLocally } from '../support/net.js';
import type http from 'node:http';

const tag = `sc${Date.now().toString(36)}`;
const QUERY = 'select count(*) as n from `postgres.logs` where project = @project';

describe('public endpoints, CORS and scoped keys', () => {
  let t: TestApp;
  let server: http.Server;
  let base: string;
  const ids: Record<string, string> = {};
  const endpointKey = generateKey();
  const sourceKey = generateKey();
  const admin = () => ({ 'X-API-KEY': t.keys.admin });

  before(async () => {
    t = await testApp();
    // Through the server, so cache hits take the GET fast path as in production.
    server = createHttpServer(t.app);
    ({ base } = await listenLocally(server));
    for (const [name, extra] of [
      ['public', { enable_auth: false }],
      ['mine', { cache_duration_seconds: 600 }],
      ['other', { cache_duration_seconds: 600 }],
    ] as const) {
      const res = await request(t.app)
        .post('/api/endpoints')
        .set(admin())
        .send({ name: `${tag}.${name}`, query: QUERY, ...extra })
        .expect(201);
      ids[name] = res.body.id;
    }
    ids.source = (
      await request(t.app)
        .post('/api/sources')
        .set(admin())
        .send({ name: `${tag}.mine` })
        .expect(201)
    ).body.id;
    await request(t.app)
      .post('/api/keys')
      .set(admin())
      .send({ name: 'one endpoint', scopes: [`query:endpoint:${ids.mine.toUpperCase()}`] })
      .expect(201)
      .then(async (res) => {
        // The key body's own key is replaced by one this test knows: created again through the repository.
        await request(t.app).delete(`/api/keys/${res.body.id}`).set(admin()).expect(204);
        assert.deepEqual(res.body.scopes, [`query:endpoint:${ids.mine}`], 'stored lower-cased');
      });
    await t.context.keys.create('one endpoint', endpointKey, [`query:endpoint:${ids.mine}`]);
    await t.context.keys.create('one source', sourceKey, [`ingest:source:${ids.source}`]);
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    for (const name of ['public', 'mine', 'other']) await request(t.app).delete(`/api/endpoints/${ids[name]}`).set(admin());
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(base + path, { headers });

  it('when a public endpoint is called without a key (or with an unknown one), then it runs, on every query path', async () => {
    for (const path of [
      `/api/endpoints/query/${tag}.public?project=${tag}`,
      `/api/endpoints/query/${ids.public}?project=${tag}`,
      `/endpoints/query/${tag}.public?project=${tag}`,
      `/api/endpoints/query/name/${tag}.public?project=${tag}`,
    ]) {
      const res = await get(path);
      assert.equal(res.status, 200, path);
      assert.deepEqual(((await res.json()) as { result: unknown }).result, [{ n: 0 }]);
    }
    assert.equal((await get(`/api/endpoints/query/${tag}.public?project=x`, { 'X-API-KEY': 'no-such-key-000000000000' })).status, 200);
    const post = await fetch(`${base}/api/endpoints/query/${tag}.public`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ project: tag }),
    });
    assert.equal(post.status, 200);
  });

  it('when an endpoint needs a key and none is sent, then 401; an unknown name is 401 without a key, 404 with one', async () => {
    assert.equal((await get(`/api/endpoints/query/${tag}.mine?project=x`)).status, 401);
    assert.equal((await get(`/endpoints/query/${tag}.mine?project=x`)).status, 401);
    assert.equal((await get(`/api/endpoints/query/${tag}.nope`)).status, 401);
    assert.equal((await get(`/api/endpoints/query/${tag}.nope`, { 'X-API-KEY': t.keys.query })).status, 404);
    assert.equal((await get(`/api/endpoints/query/${tag}.nope`, { 'X-API-KEY': t.keys.ingest })).status, 403);
    // The definition of a public endpoint stays behind the admin scope.
    assert.equal((await get(`/api/endpoints/${tag}.public`)).status, 401);
  });

  it('when a query route is called, then it answers CORS to any origin (errors and preflight too); management routes never', async () => {
    const ok = await get(`/api/endpoints/query/${tag}.public?project=x`, { Origin: 'https://app.example' });
    assert.equal(ok.headers.get('access-control-allow-origin'), '*');
    assert.match(ok.headers.get('access-control-expose-headers') ?? '', /X-Cache/);
    const refused = await get(`/api/endpoints/query/${tag}.mine?project=x`, { Origin: 'https://app.example' });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), '*');
    const preflight = await fetch(`${base}/api/endpoints/query/${tag}.mine`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /X-API-KEY/i);
    for (const [method, path] of [
      ['GET', '/api/endpoints'],
      ['OPTIONS', '/api/endpoints'],
      ['OPTIONS', '/api/logs'],
      ['GET', '/api/keys'],
    ]) {
      const res = await fetch(base + path, { method, headers: { ...admin(), Origin: 'https://app.example' } });
      assert.equal(res.headers.get('access-control-allow-origin'), null, `${method} ${path}`);
    }
  });

  it('when a key limited to one endpoint calls it, then it runs (cache hits on the fast path too); any other is 403 on every path', async () => {
    const mine = `/api/endpoints/query/${tag}.mine?project=${tag}`;
    const first = await get(mine, { 'X-API-KEY': endpointKey });
    assert.equal(first.status, 200);
    const hit = await get(mine, { 'X-API-KEY': endpointKey });
    assert.equal(hit.status, 200);
    assert.equal(hit.headers.get('x-cache'), 'HIT');
    // The other endpoint's result is cached by a key that may run it: the fast path must still refuse this key.
    const other = `/api/endpoints/query/${tag}.other?project=${tag}`;
    assert.equal((await get(other, { 'X-API-KEY': t.keys.query })).status, 200);
    assert.equal((await get(other, { 'X-API-KEY': t.keys.query })).headers.get('x-cache'), 'HIT');
    for (const path of [other, `/api/endpoints/query/${ids.other}?project=${tag}`, `/endpoints/query/${tag}.other?project=${tag}`]) {
      const res = await get(path, { 'X-API-KEY': endpointKey });
      assert.equal(res.status, 403, path);
      assert.match(((await res.json()) as { error: { message: string } }).error.message, /lacks the "query" scope for this resource/);
    }
    const post = await fetch(`${base}/api/endpoints/query/${tag}.other`, {
      method: 'POST',
      headers: { 'X-API-KEY': endpointKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ project: tag }),
    });
    assert.equal(post.status, 403);
    assert.equal((await get(`/api/endpoints/query/${tag}.other?project=${tag}&api_key=${endpointKey}`)).status, 403);
    // Nothing else: not management, not ingest.
    assert.equal((await get('/api/endpoints', { 'X-API-KEY': endpointKey })).status, 403);
    assert.equal((await get(`/api/endpoints/${tag}.mine/sql?project=x`, { 'X-API-KEY': endpointKey })).status, 403);
    const ingest = await fetch(`${base}/api/logs?source_name=postgres.logs`, {
      method: 'POST',
      headers: { 'X-API-KEY': endpointKey, 'Content-Type': 'application/json' },
      body: '{"event_message": "x"}',
    });
    assert.equal(ingest.status, 403);
  });

  it('when a key limited to one source ingests, then into it only, on JSON and OTLP routes; it runs no endpoint', async () => {
    const post = (path: string, type: string, body: string) =>
      fetch(base + path, { method: 'POST', headers: { 'X-API-KEY': sourceKey, 'Content-Type': type }, body });
    assert.equal((await post(`/api/logs?source_name=${tag}.mine`, 'application/json', '{"event_message": "in"}')).status, 200);
    assert.equal((await post(`/api/logs?source=${ids.source}`, 'application/json', '{"event_message": "in"}')).status, 200);
    for (const path of ['/api/logs', '/logs', '/api/events']) {
      const res = await post(`${path}?source_name=postgres.logs`, 'application/json', '{"event_message": "out"}');
      assert.equal(res.status, 403, path);
    }
    const otlp = JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'x' } }] }] }] });
    assert.equal((await post(`/v1/logs?source_name=${tag}.mine`, 'application/json', otlp)).status, 200);
    assert.equal((await post('/v1/logs?source_name=postgres.logs', 'application/json', otlp)).status, 403);
    assert.equal((await get(`/api/endpoints/query/${tag}.mine?project=x`, { 'X-API-KEY': sourceKey })).status, 403);
  });

  it('when a key is created with a resource scope that names no UUID, then 422', async () => {
    const res = await request(t.app)
      .post('/api/keys')
      .set(admin())
      .send({ name: 'bad', scopes: ['query:endpoint:12'] })
      .expect(422);
    assert.equal(res.body.error.errors[0].location, 'scopes');
  });
});
