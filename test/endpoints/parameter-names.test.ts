/**
 * Parameters named like Object's own properties (issue 25, finding 5): left out of a call, a
 * parameter named `toString`, `constructor` or `hasOwnProperty` found Object's own and answered
 * 500, and `__proto__` answered 500 whether given or not (its schema's properties took it as
 * their prototype). Parameter maps and schemas have no prototype (src/endpoints/params.ts).
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { testApp, type TestApp } from '../support/http.js';

describe('endpoint parameters named like Object properties', function () {
  this.timeout(30_000);
  let t: TestApp;
  const tag = `pn${Date.now().toString(36)}`;
  before(async () => {
    t = await testApp();
  });

  for (const name of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) {
    it(`when @${name} is left out, then it is NULL; when given, then it is its value`, async () => {
      const endpoint = `${tag}-${name}`;
      await request(t.app)
        .post('/api/endpoints')
        .set('X-API-KEY', t.keys.admin)
        .send({ name: endpoint, query: `select coalesce(@${name}, 'none') as v` })
        .expect(201);
      const left = await request(t.app).get(`/api/endpoints/query/${endpoint}`).set('X-API-KEY', t.keys.query);
      assert.equal(left.status, 200, JSON.stringify(left.body));
      assert.deepEqual(left.body.result, [{ v: 'none' }]);
      const given = await request(t.app).get(`/api/endpoints/query/${endpoint}?${name}=given`).set('X-API-KEY', t.keys.query);
      assert.equal(given.status, 200, JSON.stringify(given.body));
      assert.deepEqual(given.body.result, [{ v: 'given' }]);
      const posted = await request(t.app)
        .post(`/api/endpoints/query/${endpoint}`)
        .set('X-API-KEY', t.keys.query)
        .send(`{"${name}": "posted"}`)
        .type('json');
      assert.equal(posted.status, 200, JSON.stringify(posted.body));
      assert.deepEqual(posted.body.result, [{ v: 'posted' }]);
    });
  }
});
