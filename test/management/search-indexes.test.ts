/**
 * Search indexes (src/storage/searchIndexes.ts, src/storage/indexUpkeep.ts step 5): a `pg_trgm`
 * GIN index per column of a source's `search_index` (event_message by default, STRING hot leaves
 * on request), built partition by partition by the index upkeep, used by the LIKE the translator
 * prints for a search (src/sql/postgres/search.ts), compacted once a day is over, dropped when
 * the column leaves the setting.
 */
import assert from 'node:assert/strict';
import { isSearchIndexName, searchIndexes } from '../../src/storage/searchIndexes.js';
import { listPartitions } from '../../src/storage/logTables.js';
import { COMPACT_AFTER_MS, upkeepIndexes } from '../../src/storage/indexUpkeep.js';
import { asAdmin, testApp, type TestApp } from '../support/http.js';

const DAY = 86_400_000;

describe('Search indexes', function () {
  this.timeout(120_000);
  let t: TestApp;
  const suffix = Date.now().toString(36);
  const { send, ingest } = asAdmin(() => t);
  const sql = async <R>(text: string, values: unknown[] = []) => (await t.context.db.pool.query(text, values)).rows as R[];
  /** The search indexes on the partitioned table, and for each the partitions it is attached on, with their options. */
  const searchIndexesOf = async (table: string) => {
    const parents = await sql<{ name: string; valid: boolean; def: string }>(
      `SELECT c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = $1::regclass ORDER BY 1`,
      [`logs.${table}`],
    );
    return Promise.all(
      parents
        .filter((p) => isSearchIndexName(table, p.name))
        .map(async (p) => ({
          ...p,
          children: await sql<{ partition: string; options: string[] | null }>(
            `SELECT t.relname AS partition, ci.reloptions AS options FROM pg_inherits h JOIN pg_class ci ON ci.oid = h.inhrelid
               JOIN pg_index i ON i.indexrelid = ci.oid JOIN pg_class t ON t.oid = i.indrelid WHERE h.inhparent = $1::regclass ORDER BY 1`,
            [`logs."${p.name}"`],
          ),
        })),
    );
  };

  before(async () => {
    t = await testApp();
  });

  /**
   * `what()` once the upkeep ran with `search`: a PATCH starts a run in the background, which holds
   * the table's advisory lock, so a run of the test's own may find it taken and do nothing.
   */
  async function settled<T>(name: string, search: string[], nowMs: number, what: () => Promise<T>): Promise<T> {
    const source = await t.context.sources.get(name);
    const table = source.table_name;
    const wanted = searchIndexes(table, search).map((i) => i.name);
    for (let i = 0; i < 100; i++) {
      await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, search, nowMs);
      const names = (await searchIndexesOf(table)).filter((x) => x.valid).map((x) => x.name);
      if (JSON.stringify(names.sort()) === JSON.stringify(wanted.sort())) return what();
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the search indexes of ${table} never became ${wanted.join(', ')}`);
  }

  it('when names are long, then search index names stay within 63 bytes, unique per column, and recognised', () => {
    const table = 'a'.repeat(60);
    const [a, b] = searchIndexes(table, ['event_message', 'metadata.request.path', 'event_message']);
    assert.ok(Buffer.byteLength(a.name) <= 63 && Buffer.byteLength(b.name) <= 63);
    assert.notEqual(a.name, b.name);
    assert.ok(isSearchIndexName(table, a.name) && isSearchIndexName(table, b.name));
    assert.ok(!isSearchIndexName(table, `${table.slice(0, 40)}_timestamp_idx`));
  });

  it('when a column is neither event_message nor a STRING hot leaf, then 422 names search_index', async () => {
    const name = `search.bad.${suffix}`;
    const created = await send('post', '/api/sources', {
      name,
      hot_leaves: [{ path: 'metadata.response.status_code', type: 'INT64' }],
    }).expect(201);
    assert.deepEqual(created.body.search_index, ['event_message']);
    for (const column of ['metadata.response.status_code', 'metadata.request.nope', 'project']) {
      const res = await send('patch', `/api/sources/${name}`, { search_index: [column] }).expect(422);
      assert.deepEqual([res.body.error.errors[0].reason, res.body.error.errors[0].location], ['invalidSearchIndex', 'search_index']);
    }
    const wrongShape = await send('patch', `/api/sources/${name}`, { search_index: 'event_message' }).expect(422);
    assert.equal(wrongShape.body.error.errors[0].reason, 'invalidSearchIndex');
  });

  it('when a source with events gets its upkeep, then every partition has the index, a search uses it, finished days are compacted, and a column removed loses its index', async () => {
    const name = `search.data.${suffix}`;
    await send('post', '/api/sources', { name, hot_leaves: [{ path: 'metadata.request.path', type: 'STRING' }] }).expect(201);
    await ingest(name, [
      {
        event_message: 'GET /rest/v1/todos needle-9f3a',
        timestamp: new Date(Date.now() - DAY).toISOString(),
        metadata: { request: { path: '/rest' } },
      },
      { event_message: 'POST /auth/v1/token', timestamp: new Date().toISOString(), metadata: { request: { path: '/auth' } } },
    ]).expect(200);
    const source = await t.context.sources.get(name);
    const table = source.table_name;
    const today = (await listPartitions(t.context.db.pool, table)).find((p) => p.dayMs === Math.floor(Date.now() / DAY) * DAY)!;
    const nowMs = today.dayMs + COMPACT_AFTER_MS + 60_000;
    const done = await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, source.search_index, nowMs);
    assert.ok(
      done.some((d) => d.startsWith('created')),
      done.join('\n'),
    );

    const [index] = await searchIndexesOf(table);
    assert.ok(index.valid, 'valid once attached on every partition');
    assert.match(index.def, /USING gin \(event_message \S*gin_trgm_ops\)/);
    const partitions = (await listPartitions(t.context.db.pool, table)).map((p) => p.name).sort();
    assert.deepEqual(
      index.children.map((c) => c.partition),
      partitions,
    );
    // Days that are over were rebuilt without the pending list; today's (and those ahead) keep it.
    for (const c of index.children) assert.equal(c.options?.includes('fastupdate=off') === true, c.partition < today.name, c.partition);
    assert.deepEqual(await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, source.search_index, nowMs), [], 'once');

    // The translated search (LIKE) is what the index serves: with sequential scans priced out, the plan uses it.
    const client = await t.context.db.pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      const plan = (await client.query(`EXPLAIN SELECT id FROM logs.${table} WHERE event_message LIKE '%needle-9f3a%'`)).rows
        .map((r: Record<string, string>) => r['QUERY PLAN'])
        .join('\n');
      assert.match(plan, /Bitmap Index Scan/);
      const { rows } = await client.query(`SELECT event_message FROM logs.${table} WHERE event_message LIKE '%needle-9f3a%'`);
      assert.deepEqual(
        rows.map((r: { event_message: string }) => r.event_message),
        ['GET /rest/v1/todos needle-9f3a'],
      );
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }

    // A hot leaf's column on request; event_message off: its index goes.
    const patched = await send('patch', `/api/sources/${name}`, { search_index: ['metadata.request.path'] }).expect(200);
    assert.deepEqual(patched.body.search_index, ['metadata.request.path']);
    const columns = async () => (await searchIndexesOf(table)).map((i) => i.def.match(/gin \(("[^"]+"|\w+)/)![1]);
    assert.deepEqual(await settled(name, ['metadata.request.path'], nowMs, columns), ['"metadata.request.path"']);
    await send('patch', `/api/sources/${name}`, { search_index: [] }).expect(200);
    assert.deepEqual(await settled(name, [], nowMs, columns), []);
  });
});
