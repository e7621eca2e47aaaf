/**
 * Live tail (src/lql/tail.ts): a stream over HTTP that gets exactly the new matching events, with
 * at most one query per second however many batches arrive, and none when nothing arrives.
 */
import assert from 'node:assert/strict';
import http, { type Server } from 'node:http';
import request from 'supertest';
import { testApp, type TestApp, withKey } from '../support/http.js';
import { listenLocally } from '../support/net.js';

const SOURCE = `lql.tail.${process.pid}`;

/** Reads SSE frames from a fetch body. */
async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (event) yield { event, data: data ?? '' };
    }
  }
}

describe('LQL live tail: GET /api/sources/:idOrName/tail', function () {
  this.timeout(30_000);
  let t: TestApp;
  let server: Server;
  let base: string;

  before(async () => {
    t = await testApp();
    await withKey(t.app, t.keys.admin).post('/api/sources', { name: SOURCE }).expect(201);
    server = http.createServer(t.app);
    ({ base } = await listenLocally(server));
    // The field the LQL names must be in the schema first: one earlier event brings it.
    await ingest([{ message: 'before the tail', metadata: { n: -1 } }]);
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await withKey(t.app, t.keys.admin).delete(`/api/sources/${SOURCE}`);
  });

  const ingest = (events: object[]) =>
    request(t.app).post(`/api/logs?source_name=${SOURCE}`).set('X-API-KEY', t.keys.ingest).send(events).expect(200);

  it('when 5 matching and 5 other events arrive in bursts, then exactly the 5 stream, oldest first, in at most one query a second', async () => {
    const controller = new AbortController();
    const res = await fetch(`${base}/api/sources/${SOURCE}/tail?lql=${encodeURIComponent('error m.n:>=0')}`, {
      headers: { 'X-API-KEY': t.keys.admin },
      signal: controller.signal,
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /text\/event-stream/);
    const stream = frames(res.body!);
    assert.equal((await stream.next()).value?.event, 'ready');
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      await ingest([
        { message: `boom error ${i}`, metadata: { n: i } },
        { message: `fine ${i}`, metadata: { n: i } },
      ]);
    }
    const got: string[] = [];
    let frames_ = 0;
    while (got.length < 5) {
      const { value } = await stream.next();
      if (value?.event !== 'events') continue;
      frames_++;
      got.push(...(JSON.parse(value.data) as { event_message: string }[]).map((e) => e.event_message));
    }
    const elapsed = Date.now() - started;
    controller.abort();
    assert.deepEqual(got, ['boom error 0', 'boom error 1', 'boom error 2', 'boom error 3', 'boom error 4']);
    assert.ok(frames_ <= Math.ceil(elapsed / 1000) + 1, `${frames_} queries in ${elapsed} ms`);
  });

  it('when 30 batches arrive at once, then the service runs at most one query a second for the viewer, and none while nothing arrives', async () => {
    const queries = async () => {
      const text = (await request(t.app).get('/metrics').expect(200)).text;
      return Number(/^logquery_tail_query_duration_seconds_count (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const controller = new AbortController();
    const res = await fetch(`${base}/api/sources/${SOURCE}/tail?lql=${encodeURIComponent('flood')}`, {
      headers: { 'X-API-KEY': t.keys.admin },
      signal: controller.signal,
    });
    const stream = frames(res.body!);
    assert.equal((await stream.next()).value?.event, 'ready');
    const before = await queries();
    const started = Date.now();
    await Promise.all(Array.from({ length: 30 }, (_, i) => ingest([{ message: `flood ${i}`, metadata: { n: i } }])));
    let got = 0;
    while (got < 30) {
      const { value } = await stream.next();
      if (value?.event === 'events') got += (JSON.parse(value.data) as unknown[]).length;
    }
    const elapsed = Date.now() - started;
    const ran = (await queries()) - before;
    assert.ok(ran >= 1 && ran <= Math.floor(elapsed / 1000) + 1, `${ran} queries in ${elapsed} ms for 30 batches`);
    // Nothing arrives: no query, whatever the client does.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal((await queries()) - before, ran);
    controller.abort();
  });

  it('when the LQL is wrong or a chart, then 400 before any stream', async () => {
    const bad = await withKey(t.app, t.keys.admin)
      .get(`/api/sources/${SOURCE}/tail?lql=${encodeURIComponent('m.nope:1')}`)
      .expect(400);
    assert.equal(bad.body.error.errors[0].location, 'lql:1:1');
    await withKey(t.app, t.keys.admin)
      .get(`/api/sources/${SOURCE}/tail?lql=${encodeURIComponent('c:count(*)')}`)
      .expect(400);
  });
});
