/**
 * What shippers rely on: one bad or out-of-range event never costs the others, and the paths
 * and source selectors of the original's clients all reach the same handler.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { testApp, type TestApp } from '../support/http.js';

const SOURCE = 'cloudflare.logs.prod';

describe("ingest: mixed batches and the original's paths", () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  const count = async (project: string) =>
    (await t.context.db.pool.query('SELECT count(*)::int AS n FROM logs.cloudflare_logs_prod WHERE project = $1', [project])).rows[0]
      .n as number;

  it('when a batch holds one bad, one stale and 200 good events, then the 200 are stored, the bad one is listed at its index, and the stale one is counted as dropped', async () => {
    const project = `mixed${Date.now().toString(36)}`;
    const batch: unknown[] = Array.from({ length: 200 }, (_, i) => ({ project, event_message: `good ${i}`, metadata: { i } }));
    batch.splice(57, 0, { project, event_message: 'bad', timestamp: 'not a time' });
    batch.splice(130, 0, { project, event_message: 'stale', timestamp: '2001-01-01T00:00:00Z' });
    const res = await request(t.app).post(`/api/logs?source_name=${SOURCE}`).set('X-API-KEY', t.keys.ingest).send(batch).expect(406);
    assert.equal(res.body.count, 200);
    assert.equal(res.body.dropped, 1);
    assert.equal(res.body.rejected, 1);
    assert.deepEqual(
      res.body.error.errors.map((e: { location: string }) => e.location),
      ['57'],
    );
    assert.equal(res.body.error.status, 'INVALID_ARGUMENT');
    assert.equal(await count(project), 200);
  });

  it('when no event of a batch is valid, then 406 and nothing is stored; when the body is not JSON, then 400', async () => {
    const project = `novalid${Date.now().toString(36)}`;
    const res = await request(t.app)
      .post(`/api/logs?source_name=${SOURCE}`)
      .set('X-API-KEY', t.keys.ingest)
      .send([{ project, timestamp: 'no' }, 5, { project, event_message: 7 }])
      .expect(406);
    assert.equal(res.body.count, 0);
    assert.deepEqual(
      res.body.error.errors.map((e: { location: string }) => e.location),
      ['0', '1', '2'],
    );
    assert.match(res.body.error.message, /Nothing was stored/);
    await request(t.app)
      .post(`/api/logs?source_name=${SOURCE}`)
      .set('X-API-KEY', t.keys.ingest)
      .set('Content-Type', 'application/json')
      .send('[{"a":')
      .expect(400);
    assert.equal(await count(project), 0);
  });

  it('when more than 1000 events are invalid, then the first 1000 are listed, "rejected" counts them all, and the valid ones are stored', async () => {
    const project = `manybad${Date.now().toString(36)}`;
    const batch = [...Array(1500).fill(1), { project, event_message: 'the one good event' }];
    const res = await request(t.app).post(`/api/logs?source_name=${SOURCE}`).set('X-API-KEY', t.keys.ingest).send(batch).expect(406);
    assert.equal(res.body.error.errors.length, 1000);
    assert.equal(res.body.rejected, 1500);
    assert.equal(res.body.count, 1);
    assert.match(res.body.error.message, /1500 of 1501 events are invalid \(the first 1000 are listed\)/);
    assert.equal(await count(project), 1);
  });

  for (const path of ['/logs', '/api/events', '/api/logs']) {
    it(`when events are posted to ${path}, then they are stored as at /api/logs`, async () => {
      const project = `path${path.replace(/\W/g, '')}${Date.now().toString(36)}`;
      const res = await request(t.app)
        .post(`${path}?source_name=${SOURCE}`)
        .set('X-API-KEY', t.keys.ingest)
        .send({ batch: [{ project }, { project }] })
        .expect(200);
      assert.deepEqual(res.body, { message: 'Logged!', count: 2 });
      assert.equal(await count(project), 2);
    });
  }

  it('when the source is given by UUID (?source=) or by the x-source header (name or UUID), then it is found; an unknown one is 404', async () => {
    const source = await t.context.sources.get(SOURCE);
    const project = `selector${Date.now().toString(36)}`;
    const post = (query: string) => request(t.app).post(`/logs${query}`).set('X-API-KEY', t.keys.ingest);
    await post(`?source=${source.id}`).send({ project }).expect(200);
    await post('').set('x-source', SOURCE).send({ project }).expect(200);
    await post('').set('x-source', source.id).send({ project }).expect(200);
    assert.equal(await count(project), 3);
    const unknown = await post('').set('x-source', 'no.such.source').send({ project }).expect(404);
    assert.equal(unknown.body.error.code, 404);
    const none = await post('').send({ project }).expect(400);
    assert.match(none.body.error.message, /x-source/);
  });
});
