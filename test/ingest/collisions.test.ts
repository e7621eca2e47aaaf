/**
 * Keys that normalise to one stored name (`content-type` and `content_type`) never lose a value:
 * a key that is an identifier is stored as sent, any other key becomes its normalised name, or
 * that name with the first free suffix `_2`, `_3`, … when it is taken (src/sources/shape.ts).
 */
import assert from 'node:assert/strict';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import { storedNames, toStoredShape } from '../../src/sources/shape.js';
import { inferField } from '../../src/sources/schema.js';
import { testApp, withKey, type TestApp } from '../support/http.js';

describe('keys that normalise to one name', () => {
  it('when an identifier key and a renamed key collide, then the identifier keeps the name, whatever the order, and the other gets _2', () => {
    assert.deepEqual(storedNames(['content-type', 'content_type']), ['content_type_2', 'content_type']);
    assert.deepEqual(storedNames(['content_type', 'content-type']), ['content_type', 'content_type_2']);
  });

  it('when several renamed keys collide, then they take _2, _3, … in key order, skipping names sent as they are', () => {
    assert.deepEqual(storedNames(['a-b', 'a.b', 'a b', 'a_b_2']), ['a_b', 'a_b_3', 'a_b_4', 'a_b_2']);
    assert.deepEqual(storedNames(['1x', '_1x']), ['_1x_2', '_1x']);
  });

  it('when nothing collides, then the names are those of fieldName', () => {
    assert.deepEqual(storedNames(['ok', 'x-real-ip', 'ünï']), ['ok', 'x_real_ip', '_n_']);
  });

  it('when an event holds colliding keys at any depth, then every value is stored, and the schema has every name', () => {
    const { rows, fields, errors } = normaliseEvents(
      [
        {
          metadata: { headers: { 'content-type': 'text/html', content_type: 'application/json', 'x-id': 1, x_id: 'two' } },
          'content-type': 'top',
          content_type: 'top too',
          'event-message': 'not the message',
          event_message: 'the message',
        },
      ],
      { nowMs: Date.now(), retentionDays: 1 },
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(rows[0].metadata, [
      { headers: [{ content_type_2: 'text/html', content_type: 'application/json', x_id_2: 1, x_id: 'two' }] },
    ]);
    assert.deepEqual(rows[0].body, { content_type_2: 'top', content_type: 'top too', event_message_2: 'not the message' });
    assert.equal(rows[0].event_message, 'the message');
    const headers = fields.metadata.fields!.headers.fields!;
    assert.deepEqual(Object.keys(headers).sort(), ['content_type', 'content_type_2', 'x_id', 'x_id_2']);
    assert.equal(headers.x_id_2.type, 'INT64');
    assert.equal(headers.x_id.type, 'STRING');
  });

  it('when a key after a renamed one has the name of an Object property (constructor), then its own value is stored', () => {
    const { rows, fields } = normaliseEvents([{ 'x-y': 1, constructor: 'mine', toString: 2, m: { valueOf: 3 } }], {
      nowMs: Date.now(),
      retentionDays: 1,
    });
    assert.deepEqual(rows[0].body, { x_y: 1, constructor: 'mine', toString: 2, m: [{ valueOf: 3 }] });
    const field = (map: typeof fields | undefined, name: string) => map?.[name]; // not Object's own toString/valueOf
    assert.equal(field(fields, 'toString')?.type, 'INT64');
    assert.equal(field(field(fields, 'm')?.fields, 'valueOf')?.type, 'INT64');
  });

  it('when "message" is sent beside "event_message", then it is kept as a field of its own', () => {
    const { rows } = normaliseEvents([{ event_message: 'main', message: 'kept' }], { nowMs: Date.now(), retentionDays: 1 });
    assert.equal(rows[0].event_message, 'main');
    assert.deepEqual(rows[0].body, { message: 'kept' });
  });

  it('when arrays hold colliding objects, then toStoredShape and inferField follow the same rule', () => {
    const value = [{ 'a-b': 1, a_b: 2 }];
    assert.deepEqual(toStoredShape(value), [{ a_b_2: 1, a_b: 2 }]);
    assert.deepEqual(Object.keys(inferField(value)!.fields!).sort(), ['a_b', 'a_b_2']);
  });

  describe('over HTTP', () => {
    let t: TestApp;
    before(async () => {
      t = await testApp();
    });

    it('when a shipper sends content-type and content_type in one object, then both values are stored and readable', async () => {
      const project = `collide${Date.now().toString(36)}`;
      await withKey(t.app, t.keys.ingest)
        .post('/api/logs?source_name=cloudflare.logs.prod', {
          project,
          event_message: 'collide',
          metadata: { request: { headers: { 'content-type': 'text/html', content_type: 'application/json' } } },
        })
        .expect(200);
      const res = await withKey(t.app, t.keys.query)
        .get('/api/endpoints/query/logs.all')
        .query({
          project,
          sql: 'select h.content_type, h.content_type_2 from edge_logs t cross join unnest(t.metadata) m cross join unnest(m.request) r cross join unnest(r.headers) h',
        })
        .expect(200);
      assert.deepEqual(res.body.result, [{ content_type: 'application/json', content_type_2: 'text/html' }]);
    });
  });
});
