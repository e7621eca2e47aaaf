import assert from 'node:assert/strict';
import request from 'supertest';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import { testApp, type TestApp } from '../support/http.js';

const PROJECT = 'ingest-events';
const SOURCE = 'cloudflare.logs.prod';

describe('POST /api/logs: events as stored', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
    await initTranslator();
  });
  const post = (body: unknown) =>
    request(t.app)
      .post(`/api/logs?source_name=${SOURCE}`)
      .set('X-API-KEY', t.keys.ingest)
      .send(body as object);
  const rows = async (where: string, params: unknown[]) =>
    (
      await t.context.db.pool.query(
        `SELECT id, to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS ts, event_message, project, metadata, body
         FROM logs.cloudflare_logs_prod WHERE project = $1 AND ${where} ORDER BY id`,
        [PROJECT, ...params],
      )
    ).rows;

  describe('timestamps', () => {
    // A recent moment with every digit of the microseconds set, so truncation would show.
    const base = new Date(Date.now() - 3_600_000);
    base.setUTCMilliseconds(123);
    const secs = Math.floor(base.getTime() / 1000);
    const isoDay = base.toISOString().slice(0, 19); // YYYY-MM-DDTHH:MM:SS
    const shifted = new Date((secs + 2 * 3600) * 1000).toISOString().slice(0, 19); // the same moment at +02:00
    const expected = `${isoDay}.123456`;
    const cases: Array<[string, unknown, string]> = [
      ['ISO with Z', `${isoDay}.123456Z`, expected],
      ['ISO with a +02:00 offset', `${shifted}.123456+02:00`, expected],
      ['ISO with a -0530 offset', `${new Date((secs - 5.5 * 3600) * 1000).toISOString().slice(0, 19)}.123456-0530`, expected],
      ['ISO without an offset (read as UTC)', `${isoDay}.123456`, expected],
      ['ISO with a space and nanoseconds', `${isoDay.replace('T', ' ')}.123456789Z`, expected],
      ['unix seconds (fraction)', secs + 0.5, `${isoDay}.500000`],
      ['unix milliseconds', secs * 1000 + 123, `${isoDay}.123000`],
      ['unix microseconds', secs * 1_000_000 + 123_456, expected],
      ['unix nanoseconds', secs * 1e9 + 123_456_000, expected],
    ];
    for (const [label, value, want] of cases) {
      it(`when the timestamp is ${label}, then it is stored to the microsecond`, async () => {
        const id = `ts-${label.replace(/\W+/g, '-')}`;
        await post({ id, timestamp: value, project: PROJECT, event_message: 'ts' }).expect(200);
        const [row] = await rows('id = $2', [id]);
        assert.equal(row.ts, want);
      });
    }

    it('when no timestamp is sent, then the time of ingest is used', async () => {
      const before = Date.now();
      await post({ id: 'ts-none', project: PROJECT }).expect(200);
      const [row] = await rows('id = $2', ['ts-none']);
      const ms = Date.parse(row.ts + 'Z');
      assert.ok(ms >= before - 1000 && ms <= Date.now() + 1000);
    });

    it('when a timestamp is not a date, then 406 names the event; more than an hour ahead or past retention, then it is dropped and counted', async () => {
      const res = await post({
        batch: [
          { id: 'ts-bad-0', project: PROJECT },
          { id: 'ts-bad-1', project: PROJECT, timestamp: 'yesterday' },
          { id: 'ts-bad-2', project: PROJECT, timestamp: '2026-02-30T00:00:00Z' },
          { id: 'ts-bad-3', project: PROJECT, timestamp: Date.now() + 2 * 3_600_000 },
          { id: 'ts-bad-4', project: PROJECT, timestamp: '2001-01-01T00:00:00Z' },
          { id: 'ts-bad-5', project: PROJECT, timestamp: true },
          { id: 'ts-bad-6', project: PROJECT, timestamp: Date.now() + 30 * 60_000 },
        ],
      }).expect(406);
      assert.deepEqual(
        res.body.error.errors.map((e: { location: string }) => e.location),
        ['1', '2', '5'],
      );
      assert.match(res.body.error.errors[0].message, /not ISO 8601/);
      assert.equal(res.body.count, 2);
      assert.equal(res.body.dropped, 2);
      assert.equal(res.body.rejected, 3);
      assert.deepEqual(
        (await rows(`id LIKE 'ts-bad-%'`, [])).map((r) => r.id),
        ['ts-bad-0', 'ts-bad-6'],
      );
    });

    it('when the only problems are stale or future events, then 200 with "dropped" beside "count", and the metric counts them by reason', async () => {
      const metric = async (reason: string) => {
        const text = (await request(t.app).get('/metrics')).text;
        const line = text
          .split('\n')
          .find((l) => l.startsWith(`logquery_ingest_dropped_events_total{source="${SOURCE}",reason="${reason}"}`));
        return line ? Number(line.split(' ').pop()) : 0;
      };
      const [stale0, future0] = [await metric('stale'), await metric('future')];
      const res = await post([
        { id: 'drop-0', project: PROJECT },
        { id: 'drop-1', project: PROJECT, timestamp: '2001-01-01T00:00:00Z' },
        { id: 'drop-2', project: PROJECT, timestamp: new Date(Date.now() + 3 * 3_600_000).toISOString() },
        { id: 'drop-3', project: PROJECT, timestamp: new Date(Date.now() + 3 * 3_600_000).toISOString() },
      ]).expect(200);
      assert.deepEqual(res.body, { message: 'Logged!', count: 1, dropped: 3 });
      assert.equal(await metric('stale'), stale0 + 1);
      assert.equal(await metric('future'), future0 + 2);
      assert.deepEqual(
        (await rows(`id LIKE 'drop-%'`, [])).map((r) => r.id),
        ['drop-0'],
      );
    });
  });

  it('when "message" is sent instead of "event_message", then it is stored as event_message', async () => {
    await post({ id: 'alias-1', message: 'via message', project: PROJECT }).expect(200);
    const [row] = await rows('id = $2', ['alias-1']);
    assert.equal(row.event_message, 'via message');
  });

  it('when an event has an id, then it is kept; when it has none, then a UUID is generated', async () => {
    await post([
      { id: 'kept-id-1', project: PROJECT, event_message: 'ids' },
      { project: PROJECT, event_message: 'ids' },
    ]).expect(200);
    const all = await rows(`event_message = 'ids'`, []);
    assert.equal(all.length, 2);
    assert.ok(all.some((r) => r.id === 'kept-id-1'));
    assert.ok(all.some((r) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(r.id)));
  });

  it('when an event has nested objects, then each is stored as a one-element array and other fields go to body', async () => {
    await post({
      id: 'shape-1',
      project: PROJECT,
      event_message: 'shape',
      metadata: { request: { method: 'GET', headers: { 'x-real-ip': '1.2.3.4' } }, tags: ['a', 'b'], items: [{ n: 1 }, { n: 2 }] },
      level: 'info',
      context: { host: 'db-1' },
    }).expect(200);
    const [row] = await rows('id = $2', ['shape-1']);
    assert.deepEqual(row.metadata, [
      {
        request: [{ method: 'GET', headers: [{ x_real_ip: '1.2.3.4' }] }],
        tags: ['a', 'b'],
        items: [{ n: 1 }, { n: 2 }],
      },
    ]);
    assert.deepEqual(row.body, { level: 'info', context: [{ host: 'db-1' }] });
  });

  it('when a new nested field arrives, then the source schema gets it with its type, and queries can use it', async () => {
    await post({
      id: 'schema-1',
      project: PROJECT,
      event_message: 'schema',
      metadata: { ingest_probe: { latency_ms: 12, ok: true, region: 'eu', ratio: 0.5 } },
    }).expect(200);
    const {
      rows: [row],
    } = await t.context.db.pool.query('SELECT schema FROM sources WHERE name = $1', [SOURCE]);
    const probe = row.schema.metadata?.fields?.ingest_probe;
    assert.equal(probe?.type, 'RECORD');
    assert.equal(probe?.fields?.latency_ms?.type, 'INT64');
    assert.equal(probe?.fields?.ok?.type, 'BOOL');
    assert.equal(probe?.fields?.region?.type, 'STRING');
    assert.equal(probe?.fields?.ratio?.type, 'FLOAT64');

    const translation = translateQuery({
      query: `select p.latency_ms as latency, p.region from \`${SOURCE}\` t cross join unnest(t.metadata) as m cross join unnest(m.ingest_probe) as p where t.project = @project and p.ok`,
      sources: t.context.sources.lookup,
    });
    const result = await t.context.db.pool.query(
      translation.sql,
      translation.parameters.map(() => PROJECT),
    );
    assert.deepEqual(
      result.rows.map((r) => ({ latency: Number(r.latency), region: r.region })),
      [{ latency: 12, region: 'eu' }],
    );
  });

  it('when a batch brings no new field, then the source row is not rewritten and the catalog stays as it was', async () => {
    const event = { project: PROJECT, event_message: 'same-shape', metadata: { same_shape_probe: { a: 1, b: 'x', c: { d: true } } } };
    await post([event, event]).expect(200);
    const updatedAt = async () =>
      (await t.context.db.pool.query('SELECT updated_at FROM sources WHERE name = $1', [SOURCE])).rows[0].updated_at.getTime();
    const before = await updatedAt();
    const version = t.context.sources.catalogVersion;
    for (let i = 0; i < 3; i++) await post([event]).expect(200);
    assert.equal(await updatedAt(), before);
    assert.equal(t.context.sources.catalogVersion, version);
  });

  it('when an event contains a NUL character, then 406 names that event, not 500, and the clean events are stored', async () => {
    const res = await post({
      batch: [
        { id: 'nul-0', project: PROJECT, event_message: 'fine' },
        { id: 'nul-1', project: PROJECT, event_message: 'bad\u0000message' },
        { id: 'nul-2', project: PROJECT, metadata: { deep: { value: 'x\u0000y' } } },
        { id: 'nul-3', project: PROJECT, metadata: { ['key\u0000']: 1 } },
        { id: 'nul-4', project: PROJECT, metadata: { lone: '\ud800' } },
        { id: 'nul-5', project: PROJECT, metadata: { emoji: '😀 \\u0000 is fine as text' } },
      ],
    }).expect(406);
    // A key is stored through fieldName (non-identifier characters become "_"), so event 3 is fine.
    assert.deepEqual(
      res.body.error.errors.map((e: { location: string }) => e.location),
      ['1', '2', '4'],
    );
    assert.match(res.body.error.errors[0].message, /NUL/);
    assert.match(res.body.error.errors[2].message, /surrogate/);
    assert.equal(res.body.count, 3);
    assert.deepEqual(
      (await rows(`id LIKE 'nul-%'`, [])).map((r) => r.id),
      ['nul-0', 'nul-3', 'nul-5'],
    );
  });

  it('when an event is nested too deeply, then 406 naming it, not 500, and nothing is stored', async () => {
    const deep = '{"d":'.repeat(5000) + '1' + '}'.repeat(5000);
    const res = await request(t.app)
      .post(`/api/logs?source_name=${SOURCE}`)
      .set('X-API-KEY', t.keys.ingest)
      .set('Content-Type', 'application/json')
      .send(`{"id": "deep-1", "project": "${PROJECT}", "metadata": ${deep}}`)
      .expect(406);
    assert.match(res.body.error.errors[0].message, /nested more than/);
    assert.equal(res.body.count, 0);
  });

  it('when some events of a batch are invalid, then the valid ones are stored in one go and each bad event is listed by index', async () => {
    const batch = Array.from({ length: 50 }, (_, i) => ({ id: `partial-${i}`, project: PROJECT, event_message: 'partial' })) as object[];
    batch[17] = { id: 'partial-17', project: PROJECT, event_message: 42 };
    batch[33] = 'not an object' as unknown as object;
    batch[40] = { id: 'partial-40', project: PROJECT, metadata: 'a string' };
    const res = await post({ batch }).expect(406);
    assert.equal(res.body.error.code, 406);
    assert.deepEqual(
      res.body.error.errors.map((e: { location: string }) => e.location),
      ['17', '33', '40'],
    );
    for (const e of res.body.error.errors) assert.equal(e.reason, 'invalidEvent');
    assert.match(res.body.error.message, /3 of 50 events are invalid/);
    assert.equal(res.body.count, 47);
    assert.equal((await rows(`event_message = 'partial'`, [])).length, 47);
  });

  it('when an invalid event brings a field of its own, then the source schema does not get it', async () => {
    await post([
      { id: 'schema-bad-0', project: PROJECT, metadata: { only_in_bad_event: 1, x: 'a\u0000b' } },
      { id: 'schema-bad-1', project: PROJECT, metadata: { only_in_good_event: 1 } },
    ]).expect(406);
    const {
      rows: [row],
    } = await t.context.db.pool.query('SELECT schema FROM sources WHERE name = $1', [SOURCE]);
    assert.equal(row.schema.metadata?.fields?.only_in_bad_event, undefined);
    assert.equal(row.schema.metadata?.fields?.only_in_good_event?.type, 'INT64');
  });
});
