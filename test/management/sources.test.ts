import assert from 'node:assert/strict';
import request from 'supertest';
import { insertEvents } from '../support/db.js';
import { testApp, type TestApp } from '../support/http.js';

describe('Management: /api/sources', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  const admin = {
    get: (path: string) => request(t.app).get(path).set('X-API-KEY', t.keys.admin),
    post: (path: string, body: unknown) =>
      request(t.app)
        .post(path)
        .set('X-API-KEY', t.keys.admin)
        .send(body as object),
    put: (path: string, body: unknown) =>
      request(t.app)
        .put(path)
        .set('X-API-KEY', t.keys.admin)
        .send(body as object),
    patch: (path: string, body: unknown) =>
      request(t.app)
        .patch(path)
        .set('X-API-KEY', t.keys.admin)
        .send(body as object),
    delete: (path: string) => request(t.app).delete(path).set('X-API-KEY', t.keys.admin),
  };
  const tableExists = async (table: string) =>
    (await t.context.db.pool.query(`SELECT to_regclass($1) IS NOT NULL AS ok`, [`logs."${table}"`])).rows[0].ok as boolean;

  it('when listed, then the nine default sources are in a bare array', async () => {
    const list = (await admin.get('/api/sources').expect(200)).body;
    assert.ok(Array.isArray(list));
    for (const name of ['cloudflare.logs.prod', 'postgres.logs', 'storage.logs.prod.2'])
      assert.ok(
        list.some((s: { name: string }) => s.name === name),
        name,
      );
  });

  it('when a source is created, then 201, its partitioned table exists, and events can be posted to it', async () => {
    const res = await admin.post('/api/sources', { name: 'mgmt.src-create', retention_days: 7 }).expect(201);
    assert.equal(res.body.name, 'mgmt.src-create');
    assert.equal(res.body.retention_days, 7);
    assert.equal(res.body.table_name, 'mgmt_src_create');
    assert.ok(await tableExists('mgmt_src_create'));
    await request(t.app)
      .post('/api/logs?source_name=mgmt.src-create')
      .set('X-API-KEY', t.keys.ingest)
      .send({ event_message: 'hello', project: 'mgmt-sources', metadata: { a: { b: 1 } } })
      .expect(200);
    const fetched = (await admin.get('/api/sources/mgmt.src-create').expect(200)).body;
    assert.equal(fetched.schema.metadata.fields.a.fields.b.type, 'INT64');
    assert.equal((await admin.get(`/api/sources/${res.body.id}`).expect(200)).body.name, 'mgmt.src-create');
  });

  it('when the name is taken, then 409; when it is invalid, then 422', async () => {
    await admin.post('/api/sources', { name: 'cloudflare.logs.prod' }).expect(409);
    assert.equal((await admin.post('/api/sources', { name: 'bad name' }).expect(422)).body.error.errors[0].location, 'name');
    await admin.post('/api/sources', { name: 'mgmt.ok', retention_days: 0 }).expect(422);
    await admin.post('/api/sources', { name: 'mgmt.ok', colour: 'red' }).expect(422);
  });

  it('when PATCH or PUT change a source, then 200 with the change; renaming onto a taken name is 409', async () => {
    const created = (await admin.post('/api/sources', { name: 'mgmt.src-update', retention_days: 5 }).expect(201)).body;
    const patched = (await admin.patch('/api/sources/mgmt.src-update', { retention_days: 9 }).expect(200)).body;
    assert.equal(patched.retention_days, 9);
    assert.equal(patched.name, 'mgmt.src-update');
    const put = (await admin.put(`/api/sources/${created.id}`, { name: 'mgmt.src-updated' }).expect(200)).body;
    assert.equal(put.name, 'mgmt.src-updated');
    assert.equal(put.retention_days, 30, 'PUT without retention_days goes back to the default');
    await admin.patch('/api/sources/mgmt.src-updated', { name: 'postgres.logs' }).expect(409);
  });

  it('when a source is deleted, then 204, its table is gone, and ingest to it answers 404', async () => {
    await admin.post('/api/sources', { name: 'mgmt.src-delete' }).expect(201);
    assert.ok(await tableExists('mgmt_src_delete'));
    await admin.delete('/api/sources/mgmt.src-delete').expect(204);
    assert.equal(await tableExists('mgmt_src_delete'), false);
    await admin.get('/api/sources/mgmt.src-delete').expect(404);
    await request(t.app)
      .post('/api/logs?source_name=mgmt.src-delete')
      .set('X-API-KEY', t.keys.ingest)
      .send({ event_message: 'x' })
      .expect(404);
  });

  it('when a deleted source is created again, then ingest writes to the new table', async () => {
    await admin.post('/api/sources', { name: 'mgmt.src-again' }).expect(201);
    const post = () =>
      request(t.app).post('/api/logs?source_name=mgmt.src-again').set('X-API-KEY', t.keys.ingest).send({ event_message: 'x' });
    await post().expect(200);
    await admin.delete('/api/sources/mgmt.src-again').expect(204);
    await admin.post('/api/sources', { name: 'mgmt.src-again' }).expect(201);
    await post().expect(200);
  });

  it('when a source is unknown, then 404; without an admin key, 401 or 403', async () => {
    await admin.get('/api/sources/no.such').expect(404);
    await admin.patch('/api/sources/no.such', { retention_days: 3 }).expect(404);
    await admin.delete('/api/sources/no.such').expect(404);
    await request(t.app).get('/api/sources').expect(401);
    await request(t.app).get('/api/sources').set('X-API-KEY', t.keys.ingest).expect(403);
    await request(t.app).post('/api/sources').set('X-API-KEY', t.keys.query).send({ name: 'mgmt.nope' }).expect(403);
  });

  it('when partitions are listed, then events per UTC day, oldest first, with the day retention drops each; 404 unknown, 403 not admin', async () => {
    await admin.post('/api/sources', { name: 'partition.counts', retention_days: 7 }).expect(201);
    const day = 86_400_000;
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    await insertEvents('partition.counts', [
      { event_message: 'a', timestamp: at(now - day) },
      { event_message: 'b', timestamp: at(now) },
      { event_message: 'c', timestamp: at(now) },
      { event_message: 'd', timestamp: at(now) },
    ]);
    const partitions = (await admin.get('/api/sources/partition.counts/partitions').expect(200)).body as Array<{
      day: string;
      events: number;
      drops_at: string;
      partition: string;
    }>;
    const today = at(now).slice(0, 10);
    const yesterday = at(now - day).slice(0, 10);
    assert.deepEqual(
      partitions.map((p) => p.day),
      [...partitions.map((p) => p.day)].sort(),
    );
    assert.equal(partitions.find((p) => p.day === today)?.events, 3);
    assert.equal(partitions.find((p) => p.day === yesterday)?.events, 1);
    // Partitions made ahead of today hold nothing yet.
    assert.ok(partitions.filter((p) => p.day > today).every((p) => p.events === 0));
    // Dropped once the whole day is older than the retention: the end of the day plus 7 days.
    assert.equal(partitions.find((p) => p.day === today)?.drops_at, new Date(Date.parse(today) + 8 * day).toISOString());
    await admin.get('/api/sources/no.such.source/partitions').expect(404);
    await request(t.app).get('/api/sources/partition.counts/partitions').set('X-API-KEY', t.keys.query).expect(403);
  });
});
