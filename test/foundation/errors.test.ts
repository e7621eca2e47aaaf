import assert from 'node:assert/strict';
import request from 'supertest';
import { testApp } from '../support/http.js';

/** The error envelope (docs/API.md, "Errors"), as the dashboard reads it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a response body, read field by field as the dashboard does
function assertEnvelope(body: any, code: number, status: string): void {
  assert.equal(body.error.code, code);
  assert.equal(body.error.status, status);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0);
  assert.ok(Array.isArray(body.error.errors) && body.error.errors.length > 0);
  for (const e of body.error.errors) {
    assert.equal(typeof e.domain, 'string');
    assert.equal(typeof e.reason, 'string');
    assert.equal(typeof e.message, 'string');
  }
}

describe('error envelope', () => {
  it('when a route does not exist, then 404 with the envelope', async () => {
    const { app } = await testApp();
    const res = await request(app).get('/no/such/route');
    assert.equal(res.status, 404);
    assertEnvelope(res.body, 404, 'NOT_FOUND');
  });

  for (const { body, when, code, status } of [
    { body: '{"project": ', when: 'not valid JSON', code: 400, status: 'INVALID_ARGUMENT' },
    {
      body: JSON.stringify({ project: 'x', pad: 'a'.repeat(1_100_000) }),
      when: 'larger than 1 MB',
      code: 413,
      status: 'PAYLOAD_TOO_LARGE',
    },
  ]) {
    it(`when a POST body is ${when}, then ${code} with the envelope`, async () => {
      const { app, keys } = await testApp();
      const res = await request(app)
        .post('/api/endpoints/query/logs.all')
        .set('X-API-KEY', keys.query)
        .set('Content-Type', 'application/json')
        .send(body);
      assert.equal(res.status, code);
      assertEnvelope(res.body, code, status);
    });
  }

  it('when a parameter is repeated or not a string, then 400 naming it', async () => {
    const { app, keys } = await testApp();
    const repeated = await request(app).get('/api/endpoints/query/logs.all?project=a&project=b').set('X-API-KEY', keys.query);
    assert.equal(repeated.status, 400);
    assert.equal(repeated.body.error.errors[0].location, 'project');
    const nonString = await request(app).post('/api/endpoints/query/logs.all').set('X-API-KEY', keys.query).send({ project: 5 });
    assert.equal(nonString.status, 400);
    assertEnvelope(nonString.body, 400, 'INVALID_ARGUMENT');
  });

  it('when the sandboxed sql does not parse, then 400 gives line and column', async () => {
    const { app, keys } = await testApp();
    const res = await request(app)
      .get('/api/endpoints/query/logs.all')
      .query({ project: 'a', sql: 'select id\nfrom edge_logs where (' })
      .set('X-API-KEY', keys.query);
    assert.equal(res.status, 400);
    assertEnvelope(res.body, 400, 'INVALID_ARGUMENT');
    assert.match(res.body.error.errors[0].location, /^sql:2:\d+$/);
  });
});
