import assert from 'node:assert/strict';
import request from 'supertest';
import { testApp } from '../support/http.js';

const PATH = '/api/endpoints/query/logs.all';

describe('authentication of endpoint queries', () => {
  it('when no key is sent, then 401 with the error envelope', async () => {
    const { app } = await testApp();
    const res = await request(app).get(PATH).query({ project: 'a' });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 401);
    assert.equal(res.body.error.status, 'UNAUTHENTICATED');
    assert.ok(Array.isArray(res.body.error.errors));
  });

  it('when an unknown key is sent, then 401', async () => {
    const { app } = await testApp();
    const res = await request(app).get(PATH).query({ project: 'a' }).set('X-API-KEY', 'lq_not-a-real-key-at-all');
    assert.equal(res.status, 401);
  });

  it('when the key is only in the api_key URL parameter, then the query runs; other parameter names (key) are not keys', async () => {
    const { app, keys } = await testApp();
    const res = await request(app).get(PATH).query({ project: 'a', api_key: keys.query });
    assert.equal(res.status, 200);
    const other = await request(app).get(PATH).query({ project: 'a', key: keys.query });
    assert.equal(other.status, 401);
  });

  it('when a key without the query scope is sent, then 403', async () => {
    const { app, keys } = await testApp();
    const res = await request(app).get(PATH).query({ project: 'a' }).set('X-API-KEY', keys.ingest);
    assert.equal(res.status, 403);
    assert.equal(res.body.error.status, 'PERMISSION_DENIED');
  });

  it('when the key comes as "Authorization: Bearer", or is an admin key, then the query runs', async () => {
    const { app, keys } = await testApp();
    const bearer = await request(app).get(PATH).query({ project: 'a' }).set('Authorization', `Bearer ${keys.query}`);
    assert.equal(bearer.status, 200);
    const admin = await request(app).get(PATH).query({ project: 'a' }).set('X-API-KEY', keys.admin);
    assert.equal(admin.status, 200);
  });

  it('when the endpoint does not exist, then 404 with the envelope', async () => {
    const { app, keys } = await testApp();
    const res = await request(app).get('/api/endpoints/query/no.such.endpoint').set('X-API-KEY', keys.query);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.status, 'NOT_FOUND');
    const byUuid = await request(app).get('/api/endpoints/query/00000000-0000-4000-8000-000000000000').set('X-API-KEY', keys.query);
    assert.equal(byUuid.status, 404);
  });

  it('when /health, /ready or /metrics is called without a key, then it answers', async () => {
    const { app } = await testApp();
    assert.equal((await request(app).get('/health')).status, 200);
    const ready = await request(app).get('/ready');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.database, true);
    const metrics = await request(app).get('/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /logquery_http_requests_total/);
  });
});
