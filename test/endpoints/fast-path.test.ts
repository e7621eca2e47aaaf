import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import request from 'supertest';
import { Authenticator } from '../../src/auth/authenticate.js';
import { createHttpServer } from '../../src/http/server.js';
import type { ApiKeyRecord, ApiKeyRepository } from '../../src/auth/keys.js';
import { insertEvents } from '../support/db.js';
import { testApp, type TestApp, withKey } from '../support/http.js';
import { listenLocally } from '../support/net.js';
import { API_HEADERS } from '../../src/http/securityHeaders.js';

/** The security headers every answer starts with (src/http/securityHeaders.ts), as a pattern. */
const SECURITY = Object.entries(API_HEADERS)
  .map(([name, value]) => `${name}: ${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\r\n`)
  .join('');

/**
 * The fast path of `GET /api/endpoints/query/:idOrName` (src/endpoints/queryRoutes.ts) answers
 * cache hits before the app's routers. It must answer exactly as the ordinary route: these tests
 * compare the two (a `%`-escaped name always takes the ordinary route) and check that every case
 * it does not handle still gets the ordinary answer.
 */
describe('the GET fast path of endpoint queries', function () {
  this.timeout(30_000);
  const tag = `fast${Date.now().toString(36)}`;
  const name = `fast.${tag}`;
  const QUERY = 'select count(*) as n, max(event_message) as m from `cloudflare.logs.prod` where project = @project';
  let t: TestApp;
  /** The server main.ts runs (fast path before Express), and the app alone (fast path as its first middleware). */
  const servers: Record<'served' | 'app', { server?: http.Server; port: number }> = { served: { port: 0 }, app: { port: 0 } };
  const ordinaryName = `%${name.charCodeAt(0).toString(16)}${name.slice(1)}`; // a %-escape: always the ordinary route

  const query = (path: string, key: string) => request(t.app).get(path).set('X-API-KEY', key);
  const admin = () => withKey(t.app, t.keys.admin);

  /**
   * The raw bytes of one response, with the Date header taken out. Each request carries the same
   * X-Request-Id, which both paths echo (test/foundation/pipeline.test.ts checks fresh ids).
   */
  function raw(path: string, headers: Record<string, string>, via: keyof typeof servers = 'served'): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(servers[via].port, '127.0.0.1');
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (data += chunk));
      socket.on('end', () => resolve(data.replace(/\r\nDate: [^\r]*/, '')));
      socket.on('error', reject);
      const lines = [
        `GET ${path} HTTP/1.1`,
        'Host: localhost',
        'Connection: close',
        'X-Request-Id: fast-path-test',
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(lines.join('\r\n') + '\r\n\r\n');
    });
  }

  async function metric(route: string, status: string): Promise<number> {
    const text = (await request(t.app).get('/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`logquery_http_requests_total{route="${route}",status="${status}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  before(async () => {
    t = await testApp();
    await insertEvents('cloudflare.logs.prod', [
      { project: tag, event_message: 'GET | 200 | 10.1.2.3 | /a' },
      { project: tag, event_message: 'GET | 200 | 10.1.2.4 | /b' },
    ]);
    await admin()
      .post('/api/endpoints', { name, query: QUERY, parameters: [{ name: 'project', required: true }], cache_duration_seconds: 600 })
      .expect(201);
    for (const [via, server] of [
      ['served', createHttpServer(t.app)],
      ['app', http.createServer(t.app)],
    ] as const) {
      servers[via] = { server, port: (await listenLocally(server)).port };
    }
  });
  after(async () => {
    for (const { server } of Object.values(servers)) await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await admin().delete(`/api/endpoints/${name}`);
    await admin().delete(`/api/endpoints/${name}.regex`);
  });

  it('when a call is a cache hit, then the fast path sends the same bytes as the ordinary route', async () => {
    const headers = { 'X-API-KEY': t.keys.query };
    const first = await raw(`/api/endpoints/query/${name}?project=${tag}`, headers);
    assert.match(
      first,
      new RegExp(
        `^HTTP/1\\.1 200 OK\r\n${SECURITY}X-Request-Id: fast-path-test\r\nAccess-Control-Allow-Origin: \\*\r\nAccess-Control-Expose-Headers: X-Cache\r\nX-Cache: MISS\r\n`,
      ),
    );
    const fast = await raw(`/api/endpoints/query/${name}?project=${tag}`, headers);
    const ordinary = await raw(`/api/endpoints/query/${ordinaryName}?project=${tag}`, headers);
    assert.match(
      fast,
      new RegExp(
        `^HTTP/1\\.1 200 OK\r\n${SECURITY}X-Request-Id: fast-path-test\r\nAccess-Control-Allow-Origin: \\*\r\nAccess-Control-Expose-Headers: X-Cache\r\nX-Cache: HIT\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \\d+\r\n`,
      ),
    );
    assert.equal(fast, ordinary);
    assert.equal(await raw(`/api/endpoints/query/${name}?project=${tag}`, headers, 'app'), ordinary);
    assert.equal(JSON.parse(fast.slice(fast.indexOf('\r\n\r\n') + 4)).result[0].n, 2);
    // Redaction asked by header: its own cache entry, answered alike by both.
    const redacted = { ...headers, 'LF-ENDPOINT-REDACT-PII': ' TRUE ' };
    await raw(`/api/endpoints/query/${name}?project=${tag}`, redacted);
    const fastRedacted = await raw(`/api/endpoints/query/${name}?project=${tag}`, redacted);
    assert.equal(fastRedacted, await raw(`/api/endpoints/query/${ordinaryName}?project=${tag}`, redacted));
    assert.equal(fastRedacted, await raw(`/api/endpoints/query/${name}?project=${tag}`, redacted, 'app'));
    assert.match(fastRedacted, /X-Cache: HIT/);
    assert.match(fastRedacted, /REDACTED/);
    assert.doesNotMatch(fastRedacted, /10\.1\.2\.4/);
  });

  it("when a conditional request (If-None-Match: *) is a hit, then the answer is the ordinary route's", async () => {
    const headers = { 'X-API-KEY': t.keys.query, 'If-None-Match': '*' };
    const fast = await raw(`/api/endpoints/query/${name}?project=${tag}`, headers);
    const ordinary = await raw(`/api/endpoints/query/${ordinaryName}?project=${tag}`, headers);
    assert.match(ordinary, /^HTTP\/1\.1 304 /);
    assert.equal(fast, ordinary);
  });

  it("when the query of a prepared run fails, then the answer and its metrics are the ordinary route's", async () => {
    const regex = `${name}.regex`;
    await admin()
      .post('/api/endpoints', {
        name: regex,
        query: 'select count(*) as n from `cloudflare.logs.prod` where regexp_contains(event_message, @pattern)',
        parameters: [{ name: 'pattern', required: true }],
        cache_duration_seconds: 600,
      })
      .expect(201);
    const headers = { 'X-API-KEY': t.keys.query };
    await raw(`/api/endpoints/query/${regex}?pattern=GET`, headers); // the endpoint is now looked up in this process
    const ordinary = await raw(`/api/endpoints/query/%${regex.charCodeAt(0).toString(16)}${regex.slice(1)}?pattern=(`, headers);
    assert.match(ordinary, /^HTTP\/1\.1 400 /);
    for (const via of ['served', 'app'] as const) {
      const before = await metric('/api/endpoints/query/:idOrName', '400');
      assert.equal(await raw(`/api/endpoints/query/${regex}?pattern=(`, headers, via), ordinary);
      assert.equal(await metric('/api/endpoints/query/:idOrName', '400'), before + 1);
    }
  });

  it('when hits are answered by the fast path, then the HTTP metrics count them under the route', async () => {
    const path = `/api/endpoints/query/${name}?project=${tag}`;
    await query(path, t.keys.query).expect(200);
    const before = await metric('/api/endpoints/query/:idOrName', '200');
    for (let i = 0; i < 3; i++) assert.equal((await query(path, t.keys.query).expect(200)).headers['x-cache'], 'HIT');
    for (let i = 0; i < 2; i++) assert.match(await raw(path, { 'X-API-KEY': t.keys.query }), /X-Cache: HIT/);
    assert.equal(await metric('/api/endpoints/query/:idOrName', '200'), before + 5);
    const before400 = await metric('/api/endpoints/query/:idOrName', '400');
    await query(`/api/endpoints/query/${name}?project=`, t.keys.query).expect(400);
    assert.equal(await metric('/api/endpoints/query/:idOrName', '400'), before400 + 1);
  });

  it('when the endpoint is cached here but the call is wrong, then the ordinary errors', async () => {
    await query(`/api/endpoints/query/${name}?project=${tag}`, t.keys.query).expect(200);
    const missing = await query(`/api/endpoints/query/${name}`, t.keys.query).expect(400);
    assert.equal(missing.body.error.errors[0].location, 'project');
    const twice = await query(`/api/endpoints/query/${name}?project=${tag}&project=x`, t.keys.query).expect(400);
    assert.equal(twice.body.error.errors[0].location, 'project');
    const sandbox = await query(`/api/endpoints/query/${name}?project=${tag}&sql=select+1`, t.keys.query).expect(400);
    assert.equal(sandbox.body.error.errors[0].location, 'sql');
    assert.equal((await request(t.app).get(`/api/endpoints/query/${name}?project=${tag}`)).status, 401);
    assert.equal((await query(`/api/endpoints/query/${name}?project=${tag}`, t.keys.ingest)).status, 403);
    assert.equal((await query(`/api/endpoints/query/${name}?project=${tag}`, 'lq_unknown-key-of-some-length')).status, 401);
    // HEAD and a trailing slash take the ordinary route too.
    assert.equal((await request(t.app).head(`/api/endpoints/query/${name}?project=${tag}`).set('X-API-KEY', t.keys.query)).status, 200);
    assert.equal((await query(`/api/endpoints/query/${name}/?project=${tag}`, t.keys.query)).headers['x-cache'], 'HIT');
  });

  it('when the endpoint is changed on this replica, then the next call sees it (prepared runs belong to one version)', async () => {
    const path = `/api/endpoints/query/${name}?project=${tag}`;
    await query(path, t.keys.query).expect(200);
    assert.equal((await query(path, t.keys.query).expect(200)).headers['x-cache'], 'HIT');
    await admin()
      .patch(`/api/endpoints/${name}`, { query: 'select count(*) as total from `cloudflare.logs.prod` where project = @project' })
      .expect(204);
    const changed = await query(path, t.keys.query).expect(200);
    assert.equal(changed.headers['x-cache'], 'MISS');
    assert.deepEqual(changed.body.result, [{ total: 2 }]);
    await admin()
      .patch(`/api/endpoints/${name}`, { parameters: [{ name: 'project', required: true, allowed_values: ['only-this'] }] })
      .expect(204);
    const refused = await query(path, t.keys.query).expect(400);
    assert.equal(refused.body.error.errors[0].location, 'project');
    await admin()
      .patch(`/api/endpoints/${name}`, { query: QUERY, parameters: [{ name: 'project', required: true }] })
      .expect(204);
  });

  it('when a key used a moment ago is deleted on this replica, then it stops working at once', async () => {
    const created = await admin()
      .post('/api/keys', { name: `fast-${tag}`, scopes: ['query'] })
      .expect(201);
    const path = `/api/endpoints/query/${name}?project=${tag}`;
    await query(path, created.body.key).expect(200);
    await query(path, created.body.key).expect(200);
    await admin().delete(`/api/keys/${created.body.id}`).expect(204);
    const res = await query(path, created.body.key).expect(401);
    assert.equal(res.body.error.status, 'UNAUTHENTICATED');
  });

  it('when many calls need the endpoint looked up at once, then one query is made', async () => {
    const knex = t.context.db.knex;
    let lookups = 0;
    const count = (q: { sql: string }) => {
      if (/from "endpoints"/.test(q.sql)) lookups++;
    };
    await admin().patch(`/api/endpoints/${name}`, { description: 'forget the cached lookups' }).expect(204);
    knex.on('query', count);
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => query(`/api/endpoints/query/${name}?project=${tag}`, t.keys.query)),
      );
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
    } finally {
      knex.removeListener('query', count);
    }
    // One (a second only if the calls took long enough for the background refresh to start): not one per call.
    assert.ok(lookups >= 1 && lookups <= 2, `${lookups} lookups`);
  });
});

describe('Authenticator lookups', () => {
  const record: ApiKeyRecord = {
    id: 'k1',
    name: 'k',
    prefix: 'lq_abc',
    scopes: ['query'],
    created_at: new Date(),
    rate_limit_per_second: null,
    rate_limit_burst: null,
    max_concurrent_queries: null,
    query_ms_per_second: null,
    query_ms_burst: null,
  };
  /** Key lookups the test answers: each is held until `release()` when `held`, so "in flight" is the test's to decide, not a timer's. */
  function fakeKeys(answer: () => ApiKeyRecord | undefined, held = true) {
    const calls: string[] = [];
    const waiting: Array<() => void> = [];
    const keys = {
      findByKey: (key: string) => {
        calls.push(key);
        const value = answer(); // what the database had when the query ran
        return held ? new Promise((r) => waiting.push(() => r(value))) : Promise.resolve(value);
      },
    } as unknown as ApiKeyRepository;
    const release = () => {
      for (const answerNow of waiting.splice(0)) answerNow();
    };
    return { keys, calls, release };
  }
  const reqWith = (key: string) => ({ headers: { 'x-api-key': key }, url: '/' }) as never;
  const pass = (auth: Authenticator, key: string) =>
    new Promise<unknown>((resolve, reject) => {
      auth
        .require('query')(reqWith(key), {} as never, (err?: unknown) => (err ? reject(err as Error) : resolve(undefined)))
        .catch(reject);
    });

  it('when a key is checked by many requests at once, then it is looked up once', async () => {
    const { keys, calls, release } = fakeKeys(() => record);
    const auth = new Authenticator(keys);
    assert.equal(auth.peek('key-1', 'query'), undefined);
    const passes = Promise.all(Array.from({ length: 10 }, () => pass(auth, 'key-1')));
    while (calls.length === 0) await new Promise((r) => setImmediate(r)); // the lookup has started; all ten wait on it
    release();
    await passes;
    assert.equal(calls.length, 1);
    assert.equal(auth.peek('key-1', 'query'), record);
    assert.equal(auth.peek('key-1', 'admin'), undefined);
    assert.equal(auth.peek('key-2', 'query'), undefined);
  });

  it('when a lookup is in flight while keys are forgotten, then its answer is not kept', async () => {
    let present = true;
    const { keys, calls, release } = fakeKeys(() => (present ? record : undefined));
    const auth = new Authenticator(keys);
    const first = pass(auth, 'key-1');
    while (calls.length === 0) await new Promise((r) => setImmediate(r)); // the first lookup has started
    present = false; // deleted while the first lookup was running
    auth.forget();
    release(); // the first lookup answers only now, after the forget
    await first; // that request started before the deletion
    const second = pass(auth, 'key-1');
    while (calls.length < 2) await new Promise((r) => setImmediate(r));
    release();
    await assert.rejects(second, /not valid/);
    assert.equal(calls.length, 2);
  });

  it('when a cached key is used shortly before its entry expires, then it is looked up again in the background', async () => {
    const { keys, calls } = fakeKeys(() => record, false);
    let clock = 1_000_000;
    const auth = new Authenticator(keys, { ttlMs: 1_100, now: () => clock });
    await pass(auth, 'key-1');
    assert.equal(calls.length, 1);
    assert.equal(auth.peek('key-1', 'query'), record); // > 1 s left: no lookup
    assert.equal(calls.length, 1);
    clock += 200;
    assert.equal(auth.peek('key-1', 'query'), record); // < 1 s left: answered, and looked up again
    assert.equal(calls.length, 2);
    await new Promise((r) => setImmediate(r)); // the background lookup settles (its answer is already there)
    clock += 1_000; // past the first entry's lifetime
    assert.equal(auth.peek('key-1', 'query'), record);
    assert.equal(calls.length, 3);
  });
});
