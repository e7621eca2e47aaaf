/**
 * The HTTP app in-process on the shared test database, with one key per scope.
 *
 *   const { app, keys } = await testApp();
 *   await request(app).get('/api/endpoints').set('X-API-KEY', keys.admin).expect(200);
 */
import http from 'node:http';
import type { Listener } from '../../src/http/server.js';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import type { AppContext } from '../../src/context.js';
import { testContext } from './db.js';
import { listenLocally } from './net.js';

export interface TestApp {
  app: Listener;
  context: AppContext;
  keys: { admin: string; query: string; ingest: string };
}

let shared: Promise<TestApp> | undefined;

export function testApp(): Promise<TestApp> {
  shared ??= (async () => {
    const context = await testContext();
    const keys = { admin: generateKey(), query: generateKey(), ingest: generateKey() };
    await context.keys.create('test-admin', keys.admin, ['admin']);
    await context.keys.create('test-query', keys.query, ['query']);
    await context.keys.create('test-ingest', keys.ingest, ['ingest']);
    return { app: await createApp(context), context, keys };
  })();
  return shared;
}

export interface ServedTestApp extends TestApp {
  /** `http://127.0.0.1:<port>` of the app. */
  base: string;
}

/**
 * For the enclosing `describe`: the shared test app, also listening on a free port of 127.0.0.1
 * for clients that need a URL rather than supertest (fetch, openapi-fetch). Its fields are set
 * in a `before` hook, so they are read in tests and hooks, never in the `describe` body.
 */
export function servedTestApp(): ServedTestApp {
  const served = {} as ServedTestApp;
  const server = http.createServer();
  before(async () => {
    const t = await testApp();
    server.on('request', t.app);
    Object.assign(served, t, { base: (await listenLocally(server)).base });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return served;
}

/** Requests to `app` carrying `key`: `withKey(t.app, t.keys.admin).post('/api/endpoints', body)`. */
export function withKey(app: Listener, key: string) {
  const send = (method: 'post' | 'put' | 'patch') => (path: string, body?: unknown) => {
    const call = request(app)[method](path);
    return call.set('X-API-KEY', key).send(body as object);
  };
  return {
    get: (path: string) => request(app).get(path).set('X-API-KEY', key),
    post: send('post'),
    put: send('put'),
    patch: send('patch'),
    delete: (path: string) => request(app).delete(path).set('X-API-KEY', key),
  };
}

/** Management calls and ingest with the admin key of a test app (`t()`: the app, once made in a before hook). */
export function asAdmin(t: () => TestApp) {
  return {
    send: (method: 'post' | 'patch' | 'put', path: string, body: object) =>
      request(t().app)[method](path).set('X-API-KEY', t().keys.admin).send(body),
    ingest: (source: string, events: object[]) =>
      request(t().app)
        .post(`/api/logs?source_name=${encodeURIComponent(source)}`)
        .set('X-API-KEY', t().keys.admin)
        .send(events),
  };
}
