/**
 * Covering indexes (src/storage/coveringIndexes.ts, src/storage/indexUpkeep.ts): the two indexes of
 * a log table INCLUDE the hot columns their leaves ask for; on a table with rows they are built
 * partition by partition (after each partition's backfill) while ingest and queries go on, and the
 * indexes they replace are dropped once they are valid; the count they exist for is answered by an
 * index-only scan.
 */
import assert from 'node:assert/strict';
import { childIndexName, coveringIndexes, ownIndexKind } from '../../src/storage/coveringIndexes.js';
import type { HotLeaf } from '../../src/storage/hotLeaves.js';
import { ensurePartitions, listPartitions } from '../../src/storage/logTables.js';
import { COMPACT_AFTER_MS, upkeepIndexes } from '../../src/storage/indexUpkeep.js';
import { asAdmin, testApp, type TestApp } from '../support/http.js';

const DAY = 86_400_000;

describe('Covering indexes: definitions', () => {
  const leaves: HotLeaf[] = [
    { path: 'metadata.response.status_code', type: 'INT64' },
    { path: 'metadata.request.url', type: 'STRING', index: 'timestamp' },
    { path: 'metadata.request.path', type: 'STRING', index: 'both' },
    { path: 'metadata.request.host', type: 'STRING', index: 'none' },
    { path: 'metadata.request.method', type: 'STRING', index: 'project' },
  ];

  it('when a table has no hot leaves, then its indexes keep the names and columns they always had', () => {
    assert.deepEqual(coveringIndexes('edge', []), [
      { kind: 'timestamp', name: 'edge_timestamp_idx', keys: ['"timestamp" DESC'], include: [] },
      { kind: 'project', name: 'edge_project_timestamp_idx', keys: ['project', '"timestamp" DESC'], include: [] },
    ]);
  });

  it('when leaves name their index, then each index INCLUDEs its leaves sorted, absent meaning project, none in neither', () => {
    const [ts, project] = coveringIndexes('edge', leaves);
    assert.deepEqual(ts.include, ['metadata.request.path', 'metadata.request.url']);
    assert.deepEqual(project.include, ['metadata.request.method', 'metadata.request.path', 'metadata.response.status_code']);
    assert.match(ts.name, /^edge_timestamp_c[0-9a-f]{8}$/);
    assert.match(project.name, /^edge_project_timestamp_c[0-9a-f]{8}$/);
    // The order leaves are listed in does not change the names.
    assert.deepEqual(coveringIndexes('edge', [...leaves].reverse()), [ts, project]);
    // Another INCLUDE list, another name.
    assert.notEqual(coveringIndexes('edge', leaves.slice(1))[1].name, project.name);
  });

  it('when table names are long, then index names stay within 63 bytes and unique', () => {
    const a = 'a'.repeat(48) + '_12';
    const b = 'a'.repeat(48) + '_13';
    const names = [a, b].flatMap((t) => [...coveringIndexes(t, leaves), ...coveringIndexes(t, [])].map((i) => i.name));
    for (const n of names) assert.ok(Buffer.byteLength(n) <= 63, n);
    assert.equal(new Set(names).size, names.length, names.join(', '));
    for (const t of [a, b]) {
      const own = [...coveringIndexes(t, leaves), ...coveringIndexes(t, [])];
      assert.deepEqual(
        own.map((i) => ownIndexKind(t, i.name)),
        own.map((i) => i.kind),
      );
    }
    assert.equal(ownIndexKind(a, 'edge_by_hand_idx'), undefined);
    const children = [`${a}_p20250101`, `${a}_p20250102`].flatMap((p) => names.map((n) => childIndexName(p, n)));
    for (const n of children) assert.ok(Buffer.byteLength(n) <= 63, n);
    assert.equal(new Set(children).size, children.length);
  });
});

describe('Covering indexes: on log tables', function () {
  this.timeout(120_000);
  let t: TestApp;
  const suffix = Date.now().toString(36);
  const { send, ingest } = asAdmin(() => t);
  const event = (i: number, ageMs: number) => ({
    event_message: `e${i}`,
    project: `p${i % 3}`,
    timestamp: new Date(Date.now() - ageMs).toISOString(),
    metadata: { request: { path: `/rest/v1/t${i % 7}`, method: 'GET' }, response: { status_code: i % 5 === 0 ? 500 : 200 } },
  });
  const sql = async <R>(text: string, values: unknown[] = []) => (await t.context.db.pool.query(text, values)).rows as R[];

  /** The indexes on the partitioned table (the search indexes are on finished partitions only: test/management/search-indexes.test.ts). */
  const parentIndexes = async (table: string) =>
    sql<{ name: string; valid: boolean; def: string }>(
      `SELECT c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass ORDER BY 1`,
      [`logs.${table}`],
    );
  /** The partitions whose index is attached to `index`. */
  const attached = async (index: string) =>
    (
      await sql<{ partition: string }>(
        `SELECT t.relname AS partition FROM pg_inherits h JOIN pg_index ci ON ci.indexrelid = h.inhrelid
           JOIN pg_class t ON t.oid = ci.indrelid WHERE h.inhparent = $1::regclass ORDER BY 1`,
        [`logs."${index}"`],
      )
    ).map((r) => r.partition);
  const partitions = async (table: string) => (await listPartitions(t.context.db.pool, table)).map((p) => p.name).sort();

  before(async () => {
    t = await testApp();
  });

  it('when a leaf names an index that does not exist, then 422 names the entry', async () => {
    const res = await send('post', '/api/sources', {
      name: `cov.bad.${suffix}`,
      hot_leaves: [{ path: 'metadata.request.path', index: 'all' }],
    }).expect(422);
    assert.deepEqual([res.body.error.errors[0].reason, res.body.error.errors[0].location], ['invalidHotLeaves', 'hot_leaves[0].index']);
  });

  it('when a source is created with hot leaves, then its table has the covering indexes, valid, on every partition', async () => {
    const name = `cov.new.${suffix}`;
    const leaves = [
      { path: 'metadata.response.status_code', type: 'INT64' },
      { path: 'metadata.request.path', index: 'both' },
    ];
    const created = await send('post', '/api/sources', { name, hot_leaves: leaves }).expect(201);
    assert.deepEqual(
      created.body.hot_leaves.map((l: { index: string }) => l.index),
      ['project', 'both'],
    );
    const source = await t.context.sources.get(name);
    const desired = coveringIndexes(source.table_name, source.hot_leaves!);
    const indexes = await parentIndexes(source.table_name);
    assert.deepEqual(
      indexes.map((i) => i.name),
      desired.map((d) => d.name).sort(),
    );
    for (const i of indexes) assert.ok(i.valid, i.name);
    assert.match(
      indexes.find((i) => i.name === desired[1].name)!.def,
      /\(project, "timestamp"\) INCLUDE \("metadata\.request\.path", "metadata\.response\.status_code"\)/,
    );
    for (const d of desired) assert.deepEqual(await attached(d.name), await partitions(source.table_name));
    const { rows } = await t.context.db.pool.query(`SELECT reloptions FROM pg_class WHERE relname = $1`, [
      (await partitions(source.table_name))[0],
    ]);
    assert.deepEqual(rows[0].reloptions, ['autovacuum_vacuum_insert_scale_factor=0.02', 'autovacuum_vacuum_insert_threshold=10000']);
  });

  it('when a leaf with an index is declared on a source with data, then pending partitions wait for their backfill, new partitions get the index at once, and the old index goes only when the new one is valid', async () => {
    const name = `cov.data.${suffix}`;
    await send('post', '/api/sources', { name }).expect(201);
    for (let d = 0; d < 3; d++)
      await ingest(
        name,
        Array.from({ length: 200 }, (_, i) => event(d * 200 + i, d * DAY + 60_000 + i)),
      ).expect(200);
    const source = await t.context.sources.get(name);
    const table = source.table_name;
    assert.deepEqual(
      (await parentIndexes(table)).map((i) => i.name),
      [`${table}_project_timestamp_idx`, `${table}_timestamp_idx`],
    );

    await send('patch', `/api/sources/${name}`, { hot_leaves: [{ path: 'metadata.response.status_code' }] }).expect(200);
    const leaves = (await t.context.sources.get(name)).hot_leaves!;
    const [, project] = coveringIndexes(table, leaves);
    const pending = leaves[0].pending_partitions;
    assert.ok(pending.length >= 3, pending.join(', '));

    // Before the backfill: the index exists on the table only, INVALID; no pending partition has it.
    await t.context.sources.runIndexUpkeep();
    let indexes = await parentIndexes(table);
    assert.equal(indexes.find((i) => i.name === project.name)?.valid, false, JSON.stringify(indexes));
    assert.ok(
      indexes.some((i) => i.name === `${table}_project_timestamp_idx` && i.valid),
      'the old index stays meanwhile',
    );
    const nonPending = (await partitions(table)).filter((p) => !pending.includes(p));
    assert.deepEqual(await attached(project.name), nonPending);

    // A partition created while the table's index is INVALID gets its own index attached at once.
    await ensurePartitions(t.context.db.pool, table, Date.now() + 10 * DAY, Date.now() + 10 * DAY);
    const later = (await partitions(table)).find((p) => !nonPending.includes(p) && !pending.includes(p))!;
    assert.ok((await attached(project.name)).includes(later), later);

    // After the backfill, with ingest and queries going on during the upkeep.
    await t.context.sources.runHotLeafBackfill();
    let upkeepDone = false;
    const upkeep = t.context.sources.runIndexUpkeep().finally(() => (upkeepDone = true));
    let rounds = 0;
    const count = `SELECT count(*)::int AS n FROM logs.${table} WHERE project = 'p0' AND "metadata.response.status_code" >= 500`;
    const before = (await sql<{ n: number }>(count))[0].n;
    do {
      await ingest(name, [event(3, 1_000)]).expect(200); // project p0, status 200
      assert.equal((await sql<{ n: number }>(count))[0].n, before);
      rounds++;
    } while (!upkeepDone);
    const done = await upkeep;
    assert.ok(rounds > 0);
    assert.ok(done.includes(`dropped ${table}_project_timestamp_idx`), done.join('\n'));
    indexes = await parentIndexes(table);
    assert.deepEqual(
      indexes.map((i) => [i.name, i.valid]),
      [
        [project.name, true],
        [`${table}_timestamp_idx`, true],
      ].sort(),
    );
    assert.deepEqual(await attached(project.name), await partitions(table));

    // The count this exists for: an index-only scan once the pages are all-visible.
    await t.context.db.pool.query(`VACUUM (ANALYZE) logs.${table}`);
    const client = await t.context.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off'); // a few hundred rows: a seq scan is as cheap
      const plan = await client.query(
        `EXPLAIN SELECT count(*) FROM logs.${table} WHERE project = $1 AND "timestamp" > $2 AND "metadata.response.status_code" >= 500`,
        ['p0', new Date(Date.now() - DAY).toISOString()],
      );
      await client.query('ROLLBACK');
      const text = plan.rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
      assert.match(text, /Index Only Scan using/, text);
    } finally {
      client.release();
    }
  });

  it('when only the index of a kept leaf changes, then the column and its backfill stay and only the indexes change', async () => {
    const name = `cov.data.${suffix}`;
    const table = (await t.context.sources.get(name)).table_name;
    const attnum = async () =>
      (
        await sql<{ n: number }>(`SELECT attnum AS n FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`, [
          `logs.${table}`,
          'metadata.response.status_code',
        ])
      )[0].n;
    const column = await attnum();
    const res = await send('patch', `/api/sources/${name}`, {
      hot_leaves: [{ path: 'metadata.response.status_code', index: 'both' }],
    }).expect(200);
    assert.deepEqual(res.body.hot_leaves, [{ path: 'metadata.response.status_code', type: 'INT64', index: 'both', backfill: 'done' }]);
    assert.equal(await attnum(), column, 'the column was not added again');
    await t.context.sources.runIndexUpkeep();
    const leaves = (await t.context.sources.get(name)).hot_leaves!;
    const desired = coveringIndexes(table, leaves);
    const indexes = await parentIndexes(table);
    assert.deepEqual(
      indexes.map((i) => [i.name, i.valid]),
      desired.map((d) => [d.name, true]).sort(),
    );
    for (const d of desired) assert.deepEqual(await attached(d.name), await partitions(table));
    await ingest(name, [event(1, 0)]).expect(200);
  });

  it('when an interrupted build left an INVALID index on a partition, then it is dropped and built again', async () => {
    const name = `cov.data.${suffix}`;
    const table = (await t.context.sources.get(name)).table_name;
    await send('patch', `/api/sources/${name}`, { hot_leaves: [{ path: 'metadata.response.status_code', index: 'timestamp' }] }).expect(
      200,
    );
    const [, project] = coveringIndexes(table, (await t.context.sources.get(name)).hot_leaves!);
    // The project index loses its INCLUDE (the timestamp one is the same as before): built again on each partition.
    assert.equal(project.name, `${table}_project_timestamp_idx`);
    // A partition with rows, several of one project.
    const [{ target }] = await sql<{ target: string }>(
      `SELECT c.relname AS target FROM logs.${table} x JOIN pg_class c ON c.oid = x.tableoid WHERE x.project = 'p0' LIMIT 1`,
    );
    const child = childIndexName(target, project.name);
    // A unique index over duplicate values fails half-way and stays behind INVALID, as a build cut short does.
    await assert.rejects(t.context.db.pool.query(`CREATE UNIQUE INDEX CONCURRENTLY "${child}" ON logs."${target}" (project)`), {
      code: '23505',
    });
    const invalid = await sql<{ valid: boolean }>(`SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = $1::regclass`, [
      `logs."${child}"`,
    ]);
    assert.deepEqual(invalid, [{ valid: false }]);

    await t.context.sources.runIndexUpkeep();
    const rebuilt = await sql<{ valid: boolean; def: string }>(
      `SELECT indisvalid AS valid, pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indexrelid = $1::regclass`,
      [`logs."${child}"`],
    );
    assert.equal(rebuilt[0]?.valid, true);
    assert.match(rebuilt[0].def, /\(project, "timestamp" DESC\)$/);
    assert.ok((await attached(project.name)).includes(target));
    assert.equal((await parentIndexes(table)).find((i) => i.name === project.name)?.valid, true);
  });

  it('when a leaf is removed, then the indexes its column took along are built again', async () => {
    const name = `cov.data.${suffix}`;
    const table = (await t.context.sources.get(name)).table_name;
    await send('patch', `/api/sources/${name}`, { hot_leaves: [] }).expect(200);
    await t.context.sources.runIndexUpkeep(); // follows the rebuild the PATCH started
    assert.deepEqual(
      (await parentIndexes(table)).map((i) => [i.name, i.valid]),
      [
        [`${table}_project_timestamp_idx`, true],
        [`${table}_timestamp_idx`, true],
      ],
    );
    for (const index of [`${table}_project_timestamp_idx`, `${table}_timestamp_idx`])
      assert.deepEqual(await attached(index), await partitions(table));
  });

  it('when a day is over, then its covering indexes are rebuilt full once, and the day still being written is left alone', async () => {
    const name = `cov.compact.${suffix}`;
    await send('post', '/api/sources', { name, hot_leaves: [{ path: 'metadata.response.status_code', type: 'INT64' }] }).expect(201);
    await ingest(name, [event(1, DAY), event(2, 0)]).expect(200);
    const source = await t.context.sources.get(name);
    const [, project] = coveringIndexes(source.table_name, source.hot_leaves!);
    const children = () =>
      sql<{ partition: string; child: string; options: string[] | null }>(
        `SELECT t.relname AS partition, ci.relname AS child, ci.reloptions AS options FROM pg_inherits h
           JOIN pg_class ci ON ci.oid = h.inhrelid JOIN pg_index i ON i.indexrelid = ci.oid JOIN pg_class t ON t.oid = i.indrelid
          WHERE h.inhparent = $1::regclass ORDER BY 1`,
        [`logs."${project.name}"`],
      );
    const before = await children();
    const today = (await listPartitions(t.context.db.pool, source.table_name)).find((p) => p.dayMs === Math.floor(Date.now() / DAY) * DAY)!;
    // As the job runs today, past the wait after midnight: yesterday and before are over, today is not.
    const nowMs = today.dayMs + COMPACT_AFTER_MS + 60_000;
    const done = await upkeepIndexes(t.context.db.pool, source.table_name, source.hot_leaves!, [], nowMs);
    const after = await children();
    const full = (c: { options: string[] | null }) => c.options?.includes('fillfactor=100') === true;
    assert.ok(after.filter((c) => c.partition < today.name).every(full), JSON.stringify(after));
    assert.ok(!full(after.find((c) => c.partition === today.name)!), 'today is still written');
    // Only the project index INCLUDEs the leaf; the plain timestamp index is left as it always was.
    assert.equal(done.filter((d) => d.startsWith('compacted')).length, before.filter((c) => c.partition < today.name).length);
    assert.deepEqual(await upkeepIndexes(t.context.db.pool, source.table_name, source.hot_leaves!, [], nowMs), [], 'once');
    assert.ok((await parentIndexes(source.table_name)).every((i) => i.valid));
    const { rows } = await t.context.db.pool.query(
      `SELECT count(*)::int AS n FROM logs.${source.table_name} WHERE project = 'p1' AND "metadata.response.status_code" = 200`,
    );
    assert.equal(rows[0].n, 1);
  });
});
