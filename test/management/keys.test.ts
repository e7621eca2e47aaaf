import assert from 'node:assert/strict';
import request from 'supertest';
import { testApp, type TestApp } from '../support/http.js';

describe('Management: /api/keys', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });

  it('when a key is created, then 201 shows it once; the listing never shows a key or hash', async () => {
    const res = await request(t.app)
      .post('/api/keys')
      .set('X-API-KEY', t.keys.admin)
      .send({ name: 'mgmt-shipper', scopes: ['ingest', 'query', 'ingest'] })
      .expect(201);
    const limits = ['max_concurrent_queries', 'query_ms_burst', 'query_ms_per_second', 'rate_limit_burst', 'rate_limit_per_second'];
    assert.deepEqual(Object.keys(res.body).sort(), ['created_at', 'id', 'key', ...limits, 'name', 'prefix', 'scopes'].sort());
    for (const f of limits) assert.equal(res.body[f], null, `${f}: the configured default`);
    assert.equal(res.body.name, 'mgmt-shipper');
    assert.deepEqual(res.body.scopes, ['ingest', 'query']);
    assert.equal(res.body.prefix, res.body.key.slice(0, 6));
    const list = (await request(t.app).get('/api/keys').set('X-API-KEY', t.keys.admin).expect(200)).body;
    assert.ok(Array.isArray(list));
    const listed = list.find((k: { id: string }) => k.id === res.body.id);
    assert.deepEqual(Object.keys(listed).sort(), ['created_at', 'id', ...limits, 'name', 'prefix', 'scopes'].sort());
    assert.ok(!JSON.stringify(list).includes(res.body.key));
    // The new key works with its scopes at once.
    await request(t.app)
      .post('/api/logs?source_name=postgres.logs')
      .set('X-API-KEY', res.body.key)
      .send({ event_message: 'k', project: 'mgmt-keys' })
      .expect(200);
    await request(t.app).get('/api/keys').set('X-API-KEY', res.body.key).expect(403);
  });

  it('when a key is deleted, then 204 and it answers 401 at once, even right after it was used', async () => {
    const created = (
      await request(t.app)
        .post('/api/keys')
        .set('X-API-KEY', t.keys.admin)
        .send({ name: 'mgmt-revoke', scopes: ['admin'] })
        .expect(201)
    ).body;
    await request(t.app).get('/api/keys').set('X-API-KEY', created.key).expect(200); // now cached by the authenticator
    await request(t.app).delete(`/api/keys/${created.id}`).set('X-API-KEY', t.keys.admin).expect(204);
    const res = await request(t.app).get('/api/keys').set('X-API-KEY', created.key).expect(401);
    assert.equal(res.body.error.status, 'UNAUTHENTICATED');
    await request(t.app).post('/api/logs?source_name=postgres.logs').set('X-API-KEY', created.key).send({ event_message: 'k' }).expect(401);
  });

  it('when the id is unknown or not a UUID, then 404', async () => {
    await request(t.app).delete('/api/keys/00000000-0000-4000-8000-000000000000').set('X-API-KEY', t.keys.admin).expect(404);
    await request(t.app).delete('/api/keys/not-a-uuid').set('X-API-KEY', t.keys.admin).expect(404);
  });

  it('when the name or scopes are missing or invalid, then 422 names the field', async () => {
    const cases: Array<[object, string]> = [
      [{ scopes: ['query'] }, 'name'],
      [{ name: '', scopes: ['query'] }, 'name'],
      [{ name: 'x' }, 'scopes'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['root'] }, 'scopes'],
      [{ name: 'x', scopes: ['query'], key: 'chosen' }, 'key'],
    ];
    for (const [body, location] of cases) {
      const res = await request(t.app).post('/api/keys').set('X-API-KEY', t.keys.admin).send(body).expect(422);
      assert.equal(res.body.error.errors[0].location, location, JSON.stringify(body));
    }
  });

  it('when the caller is not admin, then 403; without a key, 401', async () => {
    await request(t.app)
      .post('/api/keys')
      .set('X-API-KEY', t.keys.query)
      .send({ name: 'x', scopes: ['admin'] })
      .expect(403);
    await request(t.app).delete('/api/keys/00000000-0000-4000-8000-000000000000').set('X-API-KEY', t.keys.ingest).expect(403);
    await request(t.app).get('/api/keys').expect(401);
  });
});
