/**
 * Hot leaves through the management API (docs/API.md, "Hot leaves"): validated, added to a
 * source that has data, backfilled partition by partition while ingest and queries go on, and
 * read by queries with the same rows before, during and after the backfill.
 */
import assert from 'node:assert/strict';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import { asAdmin, testApp, type TestApp } from '../support/http.js';

describe('Management: hot leaves of a source', function () {
  this.timeout(120_000);
  let t: TestApp;
  const name = `hot.src.${Date.now().toString(36)}`;
  const admin = asAdmin(() => t);
  const send = admin.send;
  const ingest = (events: object[]) => admin.ingest(name, events);
  const event = (i: number, ageMs: number) => ({
    event_message: `e${i}`,
    timestamp: new Date(Date.now() - ageMs).toISOString(),
    metadata: { request: { path: `/rest/v1/t${i % 7}` }, response: { status_code: i % 5 === 0 ? 500 : 200 } },
  });
  const DAY = 86_400_000;

  before(async () => {
    t = await testApp();
    await initTranslator();
  });

  it('when hot_leaves are invalid, then 422 names the entry', async () => {
    await send('post', '/api/sources', { name }).expect(201);
    await ingest([event(0, 0)]).expect(200);
    for (const hot_leaves of [
      'metadata.request.path',
      [{ path: 'request.path' }],
      [{ path: 'metadata.request' }],
      [{ path: 'metadata.request.path', type: 'JSON' }],
      [{ path: 'metadata.request.path' }, { path: 'metadata.request.path' }],
      [{ path: 'metadata.request.path', colour: 'red' }],
    ]) {
      const res = await send('patch', `/api/sources/${name}`, { hot_leaves }).expect(422);
      assert.equal(res.body.error.errors[0].reason, 'invalidHotLeaves', JSON.stringify(hot_leaves));
    }
  });

  it('when a hot leaf is added to a source with data, then it is backfilled partition by partition while ingest and queries go on, with the same rows throughout', async () => {
    // Three days of rows written before the leaf exists.
    for (let d = 0; d < 3; d++) await ingest(Array.from({ length: 300 }, (_, i) => event(d * 300 + i, d * DAY + 60_000 + i))).expect(200);
    const count5xx = async () => {
      const { rows } = await t.context.db.pool.query(
        `SELECT count(*)::int AS n FROM logs.${(await t.context.sources.get(name)).table_name} WHERE (metadata->0->'response'->0->>'status_code')::bigint >= 500`,
      );
      return rows[0].n as number;
    };
    const expected = await count5xx();
    const patched = await send('patch', `/api/sources/${name}`, {
      hot_leaves: [{ path: 'metadata.response.status_code' }, { path: 'metadata.request.path', type: 'STRING' }],
    }).expect(200);
    assert.deepEqual(
      patched.body.hot_leaves.map((l: { path: string; type: string }) => [l.path, l.type]),
      [
        ['metadata.response.status_code', 'INT64'],
        ['metadata.request.path', 'STRING'],
      ],
    );
    assert.ok(patched.body.hot_leaves[0].backfill.pending_partitions >= 3, JSON.stringify(patched.body.hot_leaves[0]));

    const source = await t.context.sources.get(name);
    const table = `logs.${source.table_name}`;
    const query = async () => {
      const sql = `select count(*) as n from \`${name}\` t cross join unnest(t.metadata) as m cross join unnest(m.response) as r where r.status_code >= 500`;
      const { rows } = await t.context.db.pool.query(translateQuery({ query: sql, sources: t.context.sources.lookup }).sql);
      return Number(rows[0].n);
    };
    // The backfill, with ingest batches and queries running at the same time.
    let ingested = 0;
    const answers: number[] = [];
    let backfillDone = false;
    const backfill = t.context.upkeep.runHotLeafBackfill().finally(() => (backfillDone = true));
    const traffic = (async () => {
      while (!backfillDone) {
        await ingest([event(10_000 + ingested, 1000)]).expect(200);
        ingested++;
        answers.push(await query());
      }
    })();
    const filled = await backfill;
    await traffic;
    assert.ok(filled.length >= 3, `partitions filled: ${filled.join(', ')}`);
    assert.ok(ingested > 0, 'ingest went on during the backfill');
    const newFivexx = Array.from({ length: ingested }, (_, i) => 10_000 + i).filter((i) => i % 5 === 0).length;
    assert.equal(await query(), expected + newFivexx);
    // Every answer during the backfill counted what had been written by then.
    for (const a of answers) assert.ok(a >= expected && a <= expected + newFivexx, `${a} outside [${expected}, ${expected + newFivexx}]`);
    assert.equal(await count5xx(), expected + newFivexx);

    const { rows } = await t.context.db.pool.query(
      `SELECT count(*) FILTER (WHERE "metadata.response.status_code" IS NULL)::int AS unfilled,
              count(*) FILTER (WHERE "metadata.request.path" = metadata->0->'request'->0->>'path')::int AS same_path, count(*)::int AS n FROM ${table}`,
    );
    assert.deepEqual([rows[0].unfilled, rows[0].same_path], [0, rows[0].n]);
    const after = (await send('patch', `/api/sources/${name}`, {}).expect(200)).body;
    assert.equal(after.hot_leaves[0].backfill, 'done');
  });

  it('when a hot leaf is removed, then its column is dropped and ingest and queries go on', async () => {
    await send('patch', `/api/sources/${name}`, { hot_leaves: [{ path: 'metadata.request.path' }] }).expect(200);
    const table = (await t.context.sources.get(name)).table_name;
    const { rows } = await t.context.db.pool.query(
      `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_schema = 'logs' AND table_name = $1 AND column_name LIKE 'metadata.%'`,
      [table],
    );
    assert.equal(rows[0].n, 1);
    await ingest([event(1, 0)]).expect(200);
  });
});
