import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import request from 'supertest';
import { servedTestApp, type TestApp } from '../support/http.js';

const PROJECT = 'ingest-bodies';
const SOURCE = 'cloudflare.logs.prod';

async function countRows(t: TestApp, marker: string): Promise<number> {
  const { rows } = await t.context.db.pool.query(
    'SELECT count(*)::int AS n FROM logs.cloudflare_logs_prod WHERE project = $1 AND event_message = $2',
    [PROJECT, marker],
  );
  return rows[0].n;
}

function event(marker: string, extra: object = {}) {
  return { event_message: marker, project: PROJECT, metadata: { request: { method: 'GET' } }, ...extra };
}

describe('POST /api/logs: body forms', () => {
  const t = servedTestApp();

  /** Posts exact bytes (supertest would JSON-encode a Buffer sent with a JSON Content-Type). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the parsed response body, as supertest gives it
  async function postBytes(body: Buffer, headers: Record<string, string>): Promise<{ status: number; body: any }> {
    const res = await fetch(`${t.base}/api/logs?source_name=${SOURCE}`, {
      method: 'POST',
      headers: { 'X-API-KEY': t.keys.ingest, ...headers },
      body: new Uint8Array(body),
    });
    return { status: res.status, body: await res.json() };
  }
  const post = (query = `source_name=${SOURCE}`) => request(t.app).post(`/api/logs?${query}`).set('X-API-KEY', t.keys.ingest);

  it('when the body is one event object, then it is stored and the answer counts 1', async () => {
    const res = await post().send(event('form-object')).expect(200);
    assert.deepEqual(res.body, { message: 'Logged!', count: 1 });
    assert.equal(await countRows(t, 'form-object'), 1);
  });

  it('when the body is {"batch": [...]}, then every event is stored', async () => {
    const res = await post()
      .send({ batch: [event('form-batch'), event('form-batch'), event('form-batch')] })
      .expect(200);
    assert.equal(res.body.count, 3);
    assert.equal(await countRows(t, 'form-batch'), 3);
  });

  it('when the body is a JSON array, then every event is stored', async () => {
    const res = await post()
      .send([event('form-array'), event('form-array')])
      .expect(200);
    assert.equal(res.body.count, 2);
    assert.equal(await countRows(t, 'form-array'), 2);
  });

  it('when the body is NDJSON, then each non-blank line is one event', async () => {
    const body =
      [event('form-ndjson'), event('form-ndjson')].map((e) => JSON.stringify(e)).join('\n') +
      '\n\n' +
      JSON.stringify(event('form-ndjson')) +
      '\r\n';
    const res = await post().set('Content-Type', 'application/x-ndjson').send(body).expect(200);
    assert.equal(res.body.count, 3);
    assert.equal(await countRows(t, 'form-ndjson'), 3);
  });

  it('when an NDJSON line is not JSON, then 406 names its index and the other lines are stored', async () => {
    const body = `${JSON.stringify(event('form-ndjson-bad'))}\n{"event_message": oops}\n${JSON.stringify(event('form-ndjson-bad'))}`;
    const res = await post().set('Content-Type', 'application/x-ndjson').send(body).expect(406);
    assert.equal(res.body.error.errors.length, 1);
    assert.equal(res.body.error.errors[0].location, '1');
    assert.match(res.body.error.errors[0].message, /not valid JSON/);
    assert.equal(res.body.count, 2);
    assert.equal(await countRows(t, 'form-ndjson-bad'), 2);
  });

  it('when more than 1000 NDJSON lines are not JSON, then the body is not NDJSON: 400 and nothing is stored', async () => {
    const body = [JSON.stringify(event('form-ndjson-junk')), ...Array(1001).fill('{oops')].join('\n');
    const res = await post().set('Content-Type', 'application/x-ndjson').send(body).expect(400);
    assert.match(res.body.error.message, /not NDJSON/);
    assert.equal(await countRows(t, 'form-ndjson-junk'), 0);
  });

  it('when the body is gzip-compressed, then it is decompressed and stored', async () => {
    const body = zlib.gzipSync(JSON.stringify({ batch: [event('form-gzip'), event('form-gzip')] }));
    const res = await postBytes(body, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    assert.equal(res.status, 200);
    assert.equal(res.body.count, 2);
    assert.equal(await countRows(t, 'form-gzip'), 2);
  });

  it('when gzip-compressed NDJSON is sent, then it is stored', async () => {
    const body = zlib.gzipSync([event('form-gzip-nd'), event('form-gzip-nd')].map((e) => JSON.stringify(e)).join('\n'));
    assert.equal((await postBytes(body, { 'Content-Type': 'application/x-ndjson', 'Content-Encoding': 'gzip' })).status, 200);
    assert.equal(await countRows(t, 'form-gzip-nd'), 2);
  });

  it('when the body is deflate-compressed (zlib or raw), then it is stored', async () => {
    const json = JSON.stringify([event('form-deflate')]);
    const headers = { 'Content-Type': 'application/json', 'Content-Encoding': 'deflate' };
    assert.equal((await postBytes(zlib.deflateSync(json), headers)).status, 200);
    assert.equal((await postBytes(zlib.deflateRawSync(json), headers)).status, 200);
    assert.equal(await countRows(t, 'form-deflate'), 2);
  });

  it('when the gzip data is corrupt, then 400', async () => {
    const res = await postBytes(Buffer.from('not gzip at all'), { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 400);
  });

  it('when the body is not valid JSON, then 400 with the envelope', async () => {
    const res = await post().set('Content-Type', 'application/json').send('{"event_message": "x",').expect(400);
    assert.equal(res.body.error.status, 'INVALID_ARGUMENT');
    assert.match(res.body.error.message, /not valid JSON/);
  });

  it('when the Content-Type is neither JSON nor NDJSON, then 415 with the envelope', async () => {
    const res = await post().set('Content-Type', 'text/csv').send('a,b\n1,2').expect(415);
    assert.equal(res.body.error.code, 415);
    assert.match(res.body.error.message, /application\/json/);
    assert.equal(res.body.error.errors[0].location, 'Content-Type');
  });

  it('when the Content-Encoding is unknown, then 415 naming that header; a UTF-8 byte order mark is accepted', async () => {
    const res = await postBytes(Buffer.from(JSON.stringify(event('x'))), {
      'Content-Type': 'application/json',
      'Content-Encoding': 'compress',
    });
    assert.equal(res.status, 415);
    assert.equal(res.body.error.errors[0].location, 'Content-Encoding');
    const bom = await postBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(event('form-bom')))]), {
      'Content-Type': 'application/json; charset=utf-8',
    });
    assert.equal(bom.status, 200);
    assert.equal(await countRows(t, 'form-bom'), 1);
  });

  it('when the batch is empty, then 200 with count 0', async () => {
    const res = await post().send({ batch: [] }).expect(200);
    assert.deepEqual(res.body, { message: 'Logged!', count: 0 });
    await post().send([]).expect(200);
  });

  it('when the body is empty, then 400', async () => {
    const res = await post().set('Content-Type', 'application/json').send('').expect(400);
    assert.match(res.body.error.message, /empty/);
  });

  it('when the body is a JSON scalar or batch is not an array, then 400', async () => {
    await post().set('Content-Type', 'application/json').send('42').expect(400);
    await post()
      .send({ batch: { event_message: 'x' } })
      .expect(400);
  });

  it('when the body is larger than 10 MB, then 413 with the envelope', async () => {
    const big = JSON.stringify({ batch: [{ event_message: 'x'.repeat(11 * 1024 * 1024), project: PROJECT }] });
    const res = await post().set('Content-Type', 'application/json').send(big).expect(413);
    assert.equal(res.body.error.status, 'PAYLOAD_TOO_LARGE');
  });

  it('when a small gzip body inflates past 10 MB (a gzip bomb), then 413 and nothing is written', async () => {
    const inflated = Buffer.alloc(64 * 1024 * 1024, 0x20); // 64 MB of spaces
    const bomb = zlib.gzipSync(inflated, { level: 9 });
    assert.ok(bomb.length < 200 * 1024, `the bomb is small (${bomb.length} bytes)`);
    const before = process.memoryUsage().rss;
    const res = await postBytes(bomb, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    assert.equal(res.status, 413);
    assert.equal(res.body.error.code, 413);
    assert.ok(process.memoryUsage().rss - before < 48 * 1024 * 1024, 'the inflated body was never held whole');
  });

  it('when the source is unknown, then 404', async () => {
    const res = await post('source_name=no.such.source').send(event('x')).expect(404);
    assert.equal(res.body.error.status, 'NOT_FOUND');
    await post('source=5b0e9c3a-0000-4000-8000-000000000000').send(event('x')).expect(404);
  });

  it('when the source is named by its id, then the events go to it', async () => {
    const source = await t.context.sources.get(SOURCE);
    await post(`source=${source.id}`).send(event('form-by-id')).expect(200);
    assert.equal(await countRows(t, 'form-by-id'), 1);
  });

  it('when no source is named, then 400 names the parameter', async () => {
    const res = await post('').send(event('x')).expect(400);
    assert.equal(res.body.error.errors[0].location, 'source_name');
  });

  it('when no key is sent, then 401; with a query key, 403; with an admin key, 200', async () => {
    await request(t.app).post(`/api/logs?source_name=${SOURCE}`).send(event('auth')).expect(401);
    await request(t.app)
      .post(`/api/logs?source_name=${SOURCE}`)
      .set('X-API-KEY', 'lq_not-a-key-at-all-000000')
      .send(event('auth'))
      .expect(401);
    const res = await request(t.app).post(`/api/logs?source_name=${SOURCE}`).set('X-API-KEY', t.keys.query).send(event('auth')).expect(403);
    assert.equal(res.body.error.status, 'PERMISSION_DENIED');
    await request(t.app)
      .post(`/api/logs?source_name=${SOURCE}`)
      .set('Authorization', `Bearer ${t.keys.admin}`)
      .send(event('auth-admin'))
      .expect(200);
    assert.equal(await countRows(t, 'auth'), 0);
    assert.equal(await countRows(t, 'auth-admin'), 1);
  });
});
