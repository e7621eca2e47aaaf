/**
 * Limits of one ingest request beyond its bytes (issue 25, finding 2, and the OTLP part of
 * finding 5): events per request, objects and arrays per body, OTLP nesting; and normalisation
 * that lets other requests run while a large batch is worked through.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { normaliseEventsYielding } from '../../src/ingest/normalise.js';
import { MAX_EVENTS_PER_REQUEST, MAX_VALUES_PER_REQUEST } from '../../src/inputLimits.js';
import { servedTestApp } from '../support/http.js';
import { deeplyNestedRecord, otlpRequest } from '../support/hostile.js';

const SOURCE = 'cloudflare.logs.prod';

describe('ingest: limits of one request', function () {
  this.timeout(30_000);
  const t = servedTestApp();
  const post = (path = `/api/logs?source_name=${SOURCE}`) => request(t.app).post(path).set('X-API-KEY', t.keys.ingest);

  it('when a JSON array holds one event more than the limit, then 413 naming it, and nothing is stored', async () => {
    const marker = `over-the-limit-${Date.now()}`;
    const body = JSON.stringify(Array.from({ length: MAX_EVENTS_PER_REQUEST + 1 }, () => ({ event_message: marker })));
    const res = await post().set('Content-Type', 'application/json').send(body).expect(413);
    assert.match(res.body.error.message, new RegExp(`more than ${MAX_EVENTS_PER_REQUEST} events`));
    const { rows } = await t.context.db.pool.query('SELECT count(*)::int AS n FROM logs.cloudflare_logs_prod WHERE event_message = $1', [
      marker,
    ]);
    assert.equal(rows[0].n, 0);
  });

  it('when {"batch": [...]} or NDJSON lines are past the limit, then 413 too', async () => {
    const events = Array.from({ length: MAX_EVENTS_PER_REQUEST + 1 }, () => '{}');
    await post()
      .set('Content-Type', 'application/json')
      .send(`{"batch": [${events.join(',')}]}`)
      .expect(413);
    await post().set('Content-Type', 'application/x-ndjson').send(events.join('\n')).expect(413);
  });

  it('when 10 MB of empty objects arrive as one event, then 413 for objects and arrays before parsing', async () => {
    const inner = Array.from({ length: MAX_VALUES_PER_REQUEST + 1 }, () => '{}').join(',');
    const res = await post().set('Content-Type', 'application/json').send(`{"metadata": {"a": [${inner}]}}`).expect(413);
    assert.match(res.body.error.message, new RegExp(`more than ${MAX_VALUES_PER_REQUEST} JSON objects and arrays`));
  });

  it('when OTLP protobuf holds more log records than the limit, then 413 before decoding', async () => {
    const body = otlpRequest(Array.from({ length: MAX_EVENTS_PER_REQUEST + 1 }, () => Buffer.alloc(0)));
    const res = await post(`/v1/logs?source_name=${SOURCE}`).set('Content-Type', 'application/x-protobuf').send(body).expect(413);
    assert.match(res.body.error.message, new RegExp(`more than ${MAX_EVENTS_PER_REQUEST} log records`));
  });

  it('when an OTLP arrayValue is nested 50,000 deep, then 400 (protobuf and JSON), never a 500', async () => {
    const res = await post(`/v1/logs?source_name=${SOURCE}`)
      .set('Content-Type', 'application/x-protobuf')
      .send(otlpRequest([deeplyNestedRecord(50_000)]))
      .expect(400);
    assert.match(res.body.error.message, /nested more than 100 levels/);
    const json =
      '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":' +
      '{"arrayValue":{"values":['.repeat(50_000) +
      '{}' +
      ']}}'.repeat(50_000) +
      '}]}]}]}';
    const jsonRes = await post(`/v1/logs?source_name=${SOURCE}`).set('Content-Type', 'application/json').send(json).expect(400);
    assert.match(jsonRes.body.error.message, /nested more than 100 levels/);
  });

  it('when a large batch is normalised, then other callbacks run in between (the event loop is not held)', async () => {
    const events = Array.from({ length: 10_000 }, (_, i) => ({ event_message: `e${i}`, metadata: { n: i } }));
    let ranDuring = false;
    setImmediate(() => (ranDuring = true));
    const batch = await normaliseEventsYielding(events, { nowMs: Date.now(), retentionDays: 1 });
    assert.equal(batch.rows.length, 10_000);
    assert.ok(ranDuring, 'a callback queued before the batch ran before it was done');
  });
});
