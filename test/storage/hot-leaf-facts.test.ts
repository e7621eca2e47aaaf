/**
 * The facts that let queries read a hot leaf's column alone (src/storage/hotLeafFacts.ts): who
 * keeps them true, against real Postgres. A query's plan reads the column alone only while
 * `logs.hot_leaf_exact` says so; these tests check that it says so exactly when every row's
 * column holds its JSON read, and that the rows a query returns stay those of the JSON reads.
 */
import assert from 'node:assert/strict';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import { readFacts } from '../../src/storage/hotLeafFacts.js';
import { dayStart, partitionName } from '../../src/storage/logTables.js';
import type { SourceRecord } from '../../src/sources/repository.js';
import type { AppContext } from '../../src/context.js';
import { testContext } from '../support/db.js';

const STATUS = 'metadata.response.status_code';
const PATH = 'metadata.request.path';
const DAY_MS = 86_400_000;

describe('hot leaf facts: the column is read alone only where it holds every row', function () {
  this.timeout(60_000);
  let ctx: AppContext;
  let n = 0;
  const newSource = async (hot_leaves?: object[]) =>
    ctx.sources.create({ name: `facts.${Date.now().toString(36)}.${n++}`, ...(hot_leaves && { hot_leaves }) });
  const write = async (source: SourceRecord, events: object[], mergeFields = true) => {
    const batch = normaliseEvents(events, { nowMs: Date.now(), retentionDays: source.retention_days });
    assert.deepEqual(batch.errors, []);
    await ctx.writer.write(source, batch.rows, mergeFields ? batch.fields : {});
  };
  const event = (status: unknown, ageMs = 0) => ({
    event_message: 'e',
    timestamp: new Date(Date.now() - ageMs).toISOString(),
    metadata: { request: { path: '/rest/v1/x' }, response: { status_code: status } },
  });
  const exact = async (source: SourceRecord, path: string) =>
    (await ctx.db.pool.query('SELECT logs.hot_leaf_exact($1, $2) AS e', [source.table_name, path])).rows[0].e as boolean;
  /** count of status >= 500 through the translator (hot columns) and by a JSON read written by hand. */
  const counts = async (source: SourceRecord) => {
    const sql = `select count(*) as n from \`${source.name}\` t cross join unnest(t.metadata) as m cross join unnest(m.response) as r where r.status_code >= 500`;
    const translated = await ctx.db.pool.query(translateQuery({ query: sql, sources: ctx.sources.lookup }).sql);
    const json = await ctx.db.pool.query(
      `SELECT count(*)::int AS n FROM logs.${source.table_name} WHERE (metadata->0->'response'->0->>'status_code')::bigint >= 500`,
    );
    return { translated: Number(translated.rows[0].n), json: json.rows[0].n as number };
  };

  before(async () => {
    ctx = await testContext();
    await initTranslator();
  });

  it('when a source is created with hot leaves and its rows hold values of their types, then the columns are read alone', async () => {
    const source = await newSource([{ path: STATUS, type: 'INT64' }, { path: PATH }]);
    await write(source, [event(200), event(503), event(404)]);
    assert.equal(await exact(source, STATUS), true);
    assert.equal(await exact(source, PATH), true);
    assert.deepEqual(await counts(source), { translated: 1, json: 1 });
  });

  it('when a batch holds a value of another type, then from its commit on that leaf is read from the JSON where its column is NULL', async () => {
    const source = await newSource([{ path: STATUS, type: 'INT64' }, { path: PATH }]);
    await write(source, [event(500)]);
    assert.equal(await exact(source, STATUS), true);
    // "502" as text: the INT64 column stays NULL, the JSON read gives 502.
    await write(source, [event('502'), event(200)], false);
    assert.equal(await exact(source, STATUS), false, 'the status code column misses a row');
    assert.equal(await exact(source, PATH), true, 'the other leaf is untouched');
    assert.deepEqual(await counts(source), { translated: 2, json: 2 });
    const facts = await readFacts(ctx.db.pool, source.table_name);
    assert.deepEqual(
      facts.map((f) => [f.path, f.inexact]),
      [
        [PATH, false],
        [STATUS, true],
      ],
    );
  });

  it('when a record is there without the leaf, then the leaf stays exact but UNNEST of that record tests the record', async () => {
    const source = await newSource([{ path: STATUS, type: 'INT64' }]);
    await write(source, [event(200)]);
    const dense = async (depth: number) =>
      (await ctx.db.pool.query('SELECT logs.hot_leaf_dense($1, $2, $3) AS d', [source.table_name, STATUS, depth])).rows[0].d as boolean;
    assert.deepEqual([await dense(0), await dense(1)], [true, true]);
    await write(source, [{ event_message: 'no response', metadata: { request: { path: '/x' } } }]);
    assert.deepEqual([await dense(0), await dense(1)], [false, true], 'metadata without response: depth 0 only');
    await write(source, [{ event_message: 'response without status', metadata: { response: { origin_time: 3 } } }]);
    assert.deepEqual([await dense(0), await dense(1)], [false, false]);
    assert.equal(await exact(source, STATUS), true);
    const sql = `select count(*) as n from \`${source.name}\` t cross join unnest(t.metadata) as m cross join unnest(m.response) as r`;
    const { rows } = await ctx.db.pool.query(translateQuery({ query: sql, sources: ctx.sources.lookup }).sql);
    assert.equal(Number(rows[0].n), 2, 'the two rows with a response, one of them without status_code');
  });

  it('when a leaf is declared on a source with data, then it is read alone only after the backfill checked every partition, and not at all if older rows hold another type', async () => {
    const clean = await newSource();
    const dirty = await newSource();
    for (const [source, odd] of [
      [clean, 500],
      [dirty, '500'],
    ] as const) {
      await write(source, [event(200, DAY_MS), event(503, 2 * DAY_MS)]);
      await write(source, [event(odd, DAY_MS)], false);
      await ctx.sources.setHotLeaves(source.name, [{ path: STATUS, type: 'INT64' }]);
      assert.equal(await exact(source, STATUS), false, 'not before the backfill');
      await write(source, [event(501)]);
      assert.equal(await exact(source, STATUS), false, 'new rows do not make older ones checked');
    }
    await ctx.upkeep.runHotLeafBackfill();
    assert.equal(await exact(clean, STATUS), true, 'every row checked and of its type');
    assert.equal(await exact(dirty, STATUS), false, 'an older row holds "500" as text');
    for (const source of [clean, dirty]) assert.deepEqual(await counts(source), { translated: 3, json: 3 });
  });

  it('when a writer does not know a leaf yet, then the column refuses its batch, and it reads the catalog again and writes the batch with the column', async () => {
    const source = await newSource();
    await write(source, [event(200)]);
    const stale = await ctx.sources.get(source.name); // what another replica may still hold
    await ctx.sources.setHotLeaves(source.name, [{ path: STATUS, type: 'INT64' }]);
    await ctx.upkeep.runHotLeafBackfill();
    assert.equal(await exact(source, STATUS), true);
    // The batch names no hot column: without the refusal its row's column would be NULL while
    // the leaf is read alone, and the 500 below would not be counted.
    await write(stale, [event(500)]);
    const { rows } = await ctx.db.pool.query(`SELECT count("${STATUS}")::int AS filled, count(*)::int AS n FROM logs.${source.table_name}`);
    assert.deepEqual(rows[0], { filled: 2, n: 2 });
    assert.equal(await exact(source, STATUS), true);
    assert.deepEqual(await counts(source), { translated: 1, json: 1 });
  });

  it('when hot columns come from before the facts were kept, then at start-up they get the default, and their rows are checked before they are read alone', async () => {
    const source = await newSource([{ path: STATUS, type: 'INT64' }]);
    await write(source, [event(503)]);
    // As an install from before: no default on the column, no facts.
    await ctx.db.pool.query(`ALTER TABLE logs.${source.table_name} ALTER COLUMN "${STATUS}" DROP DEFAULT`);
    await ctx.db.pool.query('DELETE FROM hot_leaf_facts WHERE table_name = $1', [source.table_name]);
    await ctx.db.pool.query(
      `INSERT INTO logs.${source.table_name} (id, "timestamp", metadata) VALUES ('legacy', now(), '[{"response":[{"status_code":500}]}]')`,
    );
    assert.equal(await exact(source, STATUS), false);
    await ctx.upkeep.adoptUncheckedHotLeaves();
    const adopted = await ctx.sources.get(source.name);
    assert.ok(adopted.hot_leaves![0].pending_partitions.length >= 2, JSON.stringify(adopted.hot_leaves));
    await assert.rejects(
      ctx.db.pool.query(`INSERT INTO logs.${source.table_name} (id, "timestamp", metadata) VALUES ('late', now(), '[]')`),
      (e: { code?: string }) => e.code === 'LQ001',
    );
    assert.equal(await exact(source, STATUS), false, 'not before the backfill');
    await ctx.upkeep.runHotLeafBackfill();
    assert.equal(await exact(source, STATUS), true);
    assert.deepEqual(await counts(source), { translated: 2, json: 2 });
  });

  it('when a leaf is declared while the backfill fills another, then the new leaf keeps that partition to fill and check', async () => {
    const source = await newSource();
    await write(source, [event(503, DAY_MS), event(200, 0)]);
    await ctx.sources.setHotLeaves(source.name, [{ path: STATUS, type: 'INT64' }]);
    // The backfill reads the pending partitions, then fills one; the path leaf is declared in between.
    const today = partitionName(source.table_name, dayStart(Date.now()));
    const repository = (ctx.sources as unknown as { repository: { find: (id: string) => Promise<SourceRecord | undefined> } }).repository;
    const find = repository.find.bind(repository);
    let declared = false;
    repository.find = async (id) => {
      const found = await find(id);
      // When the backfill is about to fill today's partition, which holds a row.
      if (
        !declared &&
        found?.id === source.id &&
        found.hot_leaves?.find((l) => l.pending_partitions.length)?.pending_partitions[0] === today
      ) {
        declared = true;
        await ctx.sources.setHotLeaves(source.name, [{ path: STATUS, type: 'INT64' }, { path: PATH }]);
      }
      return found;
    };
    try {
      await ctx.upkeep.runHotLeafBackfill();
    } finally {
      repository.find = find;
    }
    assert.ok(declared);
    const { rows } = await ctx.db.pool.query(`SELECT count("${PATH}")::int AS filled, count(*)::int AS n FROM logs.${source.table_name}`);
    if (rows[0].filled < rows[0].n) assert.equal(await exact(source, PATH), false, 'unfilled rows: the column must not be read alone');
    await ctx.upkeep.runHotLeafBackfill();
    assert.equal(await exact(source, PATH), true);
    const sql = `select count(*) as n from \`${source.name}\` t cross join unnest(t.metadata) as m cross join unnest(m.request) as r where r.path = '/rest/v1/x'`;
    const translated = await ctx.db.pool.query(translateQuery({ query: sql, sources: ctx.sources.lookup }).sql);
    assert.equal(Number(translated.rows[0].n), 2);
  });

  it('when a partition waiting for the backfill is dropped by retention, then the backfill goes on without it', async () => {
    const source = await newSource();
    await write(source, [event(503, 2 * DAY_MS), event(200, 0)]);
    await ctx.sources.setHotLeaves(source.name, [{ path: STATUS, type: 'INT64' }]);
    const pending = (await ctx.sources.get(source.name)).hot_leaves![0].pending_partitions;
    await ctx.db.pool.query(`DROP TABLE logs.${pending[pending.length - 1]}`);
    await ctx.upkeep.runHotLeafBackfill();
    assert.deepEqual((await ctx.sources.get(source.name)).hot_leaves![0].pending_partitions, []);
    assert.equal(await exact(source, STATUS), true);
  });

  it('when a record array has more than one element, then the column stays NULL and the leaf is read from the JSON', async () => {
    const source = await newSource([{ path: STATUS, type: 'INT64' }]);
    await write(source, [event(200)]);
    await write(source, [{ event_message: 'two responses', metadata: { response: [{ status_code: 500 }, { status_code: 502 }] } }], false);
    const { rows } = await ctx.db.pool.query(
      `SELECT "${STATUS}" AS s FROM logs.${source.table_name} WHERE event_message = 'two responses'`,
    );
    assert.deepEqual(rows, [{ s: null }]);
    assert.equal(await exact(source, STATUS), false);
  });

  it('when retention drops the day that held a value of another type, then the leaf is read alone again', async () => {
    const source = await newSource([{ path: STATUS, type: 'INT64' }]);
    await write(source, [event(200, 0)]);
    await write(source, [event('500', 3 * DAY_MS)], false);
    assert.equal(await exact(source, STATUS), false);
    await ctx.sources.update(source.name, { retention_days: 2 });
    await ctx.upkeep.runPartitionUpkeep();
    assert.equal(await exact(source, STATUS), true, 'the odd row is gone with its day');
    const { rows } = await ctx.db.pool.query('SELECT count(*)::int AS n FROM hot_leaf_partition_facts WHERE table_name = $1', [
      source.table_name,
    ]);
    assert.equal(rows[0].n, 0, 'its facts are forgotten');
  });
});
