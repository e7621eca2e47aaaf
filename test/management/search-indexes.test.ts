/**
 * Search indexes (src/storage/searchIndexes.ts, src/storage/indexUpkeep.ts step 5): a `pg_trgm`
 * GIN index per column of a source's `search_index` (event_message by default, STRING hot leaves
 * on request) on each partition whose day is over, none for the whole open day (ingest writes no
 * trigram entry), used by the LIKE the translator prints for a search (src/sql/postgres/search.ts),
 * dropped when the column leaves the setting; and on a busy open day (and the day before, until its
 * own is valid) a partial one per hour that is over, which the translator's split by hours
 * (src/sql/postgres/searchHours.ts) lets the planner use.
 */
import assert from 'node:assert/strict';
import { hourlySearchIndexes, isSearchIndexName, searchIndexes } from '../../src/storage/searchIndexes.js';
import { listPartitions } from '../../src/storage/logTables.js';
import { HOURLY_MIN_ROWS, upkeepIndexes } from '../../src/storage/indexUpkeep.js';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import { SEARCH_HOUR_MS, searchHoursAt } from '../../src/sql/catalog.js';
import { asAdmin, testApp, type TestApp } from '../support/http.js';

const DAY = 86_400_000;

describe('Search indexes', function () {
  this.timeout(120_000);
  let t: TestApp;
  const suffix = Date.now().toString(36);
  const { send, ingest } = asAdmin(() => t);
  const sql = async <R>(text: string, values: unknown[] = []) => (await t.context.db.pool.query(text, values)).rows as R[];
  /** Every index named as a search index on the partitioned table or on one of its partitions. */
  const searchIndexesOf = async (table: string) =>
    (
      await sql<{ relation: string; name: string; valid: boolean; def: string; options: string[] | null }>(
        `SELECT t.relname AS relation, c.relname AS name, i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS def, c.reloptions AS options
           FROM pg_class t JOIN pg_index i ON i.indrelid = t.oid JOIN pg_class c ON c.oid = i.indexrelid
          WHERE t.oid = $1::regclass OR t.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass)
          ORDER BY 1, 2`,
        [`logs.${table}`],
      )
    ).filter((i) => isSearchIndexName(i.relation, i.name));

  before(async () => {
    t = await testApp();
  });

  /** The rare-trigram functions of `table`'s columns whose common trigrams are frozen (src/storage/commonTrigrams.ts). */
  const rareOf = async (table: string) =>
    Object.fromEntries(
      (
        await sql<{ column_name: string; index_function: string }>(
          `SELECT column_name, index_function FROM search_common_trigrams WHERE table_name = $1 AND index_function IS NOT NULL`,
          [table],
        )
      ).map((r) => [r.column_name, r.index_function]),
    );

  /** Waits for a run of the upkeep in the background (started by an ingest or a PATCH), by taking and releasing the table's lock. */
  async function quiet(table: string): Promise<void> {
    const client = await t.context.db.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [`logquery.indexes.${table}`]);
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`logquery.indexes.${table}`]);
    } finally {
      client.release();
    }
  }

  /**
   * `what()` once the upkeep ran with `search`: a PATCH starts a run in the background, which holds
   * the table's advisory lock, so a run of the test's own may find it taken and do nothing.
   */
  async function settled<T>(name: string, search: string[], nowMs: number, what: () => Promise<T>): Promise<T> {
    const source = await t.context.sources.get(name);
    const table = source.table_name;
    const finished = (await listPartitions(t.context.db.pool, table)).filter((p) => p.dayMs + DAY <= nowMs);
    for (let i = 0; i < 100; i++) {
      await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, search, nowMs);
      const rare = await rareOf(table);
      const wanted = finished.flatMap((p) => searchIndexes(p.name, search, rare).map((i) => i.name)).sort();
      const names = (await searchIndexesOf(table)).filter((x) => x.valid).map((x) => x.name);
      if (JSON.stringify(names.sort()) === JSON.stringify(wanted)) return what();
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the search indexes of ${table} never became the wanted ones`);
  }

  it('when names are long, then search index names stay within 63 bytes, unique per column, and recognised', () => {
    const partition = 'a'.repeat(52) + '_p20261126';
    const [a, b] = searchIndexes(partition, ['event_message', 'metadata.request.path', 'event_message']);
    assert.ok(Buffer.byteLength(a.name) <= 63 && Buffer.byteLength(b.name) <= 63);
    assert.notEqual(a.name, b.name);
    assert.notEqual(searchIndexes(partition.replace('26', '25'), ['event_message'])[0].name, a.name, 'unique per partition');
    assert.ok(isSearchIndexName(partition, a.name) && isSearchIndexName(partition, b.name));
    assert.ok(!isSearchIndexName(partition, `${partition.slice(0, 40)}_timestamp_idx`));
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

  it('when a source with events gets its upkeep, then each finished day has a compact index, the open day none, a search uses it and finds both days, and a column removed loses its index', async () => {
    const name = `search.data.${suffix}`;
    await send('post', '/api/sources', { name, hot_leaves: [{ path: 'metadata.request.path', type: 'STRING' }] }).expect(201);
    await ingest(name, [
      {
        event_message: 'GET /rest/v1/todos needle-9f3a',
        timestamp: new Date(Date.now() - DAY).toISOString(),
        metadata: { request: { path: '/rest' } },
      },
      { event_message: 'POST /auth/v1/token needle-9f3a', timestamp: new Date().toISOString(), metadata: { request: { path: '/auth' } } },
    ]).expect(200);
    const source = await t.context.sources.get(name);
    const table = source.table_name;
    const partitions = await listPartitions(t.context.db.pool, table);
    const today = partitions.find((p) => p.dayMs === Math.floor(Date.now() / DAY) * DAY)!;
    const yesterday = partitions.find((p) => p.dayMs === today.dayMs - DAY)!;
    // A partitioned search index of the first design (with a child on every partition, the open day's included) is dropped.
    const legacy = searchIndexes(table, ['event_message'])[0].name;
    await quiet(table);
    await sql(`CREATE INDEX "${legacy}" ON logs.${table} USING gin (event_message public.gin_trgm_ops)`);
    assert.ok((await searchIndexesOf(table)).some((i) => i.relation === table));

    const nowMs = today.dayMs + 60_000;
    await quiet(table); // the legacy index is dropped by this run or by one started in the background meanwhile
    await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, source.search_index, nowMs);
    await quiet(table);
    const indexes = await searchIndexesOf(table);
    assert.deepEqual(
      indexes.map((i) => [i.relation, i.valid, i.options]),
      partitions.filter((p) => p.dayMs < today.dayMs).map((p) => [p.name, true, ['fastupdate=off']]),
      'an index on each day that is over, none on the table, the open day or the days ahead',
    );
    assert.ok(indexes.some((i) => i.relation === yesterday.name));
    assert.match(indexes[0].def, /USING gin \(event_message \S*gin_trgm_ops\)/);
    assert.deepEqual(await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, source.search_index, nowMs), [], 'once');

    // The translated search (LIKE) is what the index serves on the finished day; the open day is scanned: both rows found.
    const client = await t.context.db.pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off');
      const plan = (await client.query(`EXPLAIN SELECT id FROM logs.${table} WHERE event_message LIKE '%needle-9f3a%'`)).rows
        .map((r: Record<string, string>) => r['QUERY PLAN'])
        .join('\n');
      assert.match(plan, new RegExp(`Bitmap Index Scan on ${indexes.find((i) => i.relation === yesterday.name)!.name}`));
      const { rows } = await client.query(
        `SELECT event_message FROM logs.${table} WHERE event_message LIKE '%needle-9f3a%' ORDER BY "timestamp"`,
      );
      assert.deepEqual(
        rows.map((r: { event_message: string }) => r.event_message),
        ['GET /rest/v1/todos needle-9f3a', 'POST /auth/v1/token needle-9f3a'],
      );
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }

    // A hot leaf's column on request; event_message off: its indexes go.
    const patched = await send('patch', `/api/sources/${name}`, { search_index: ['metadata.request.path'] }).expect(200);
    assert.deepEqual(patched.body.search_index, ['metadata.request.path']);
    const columns = async () => [...new Set((await searchIndexesOf(table)).map((i) => i.def.match(/gin \(("[^"]+"|\w+)/)![1]))];
    assert.deepEqual(await settled(name, ['metadata.request.path'], nowMs, columns), ['"metadata.request.path"']);
    await send('patch', `/api/sources/${name}`, { search_index: [] }).expect(200);
    assert.deepEqual(await settled(name, [], nowMs, columns), []);
  });

  it('when a busy open day has hours that are over, then each gets a partial index after it, the day before keeps its own until its whole-day index is valid (dropped in the same run), and a search split by hours reads them with the same rows', async () => {
    const name = `search.hourly.${suffix}`;
    await send('post', '/api/sources', { name }).expect(201);
    await ingest(name, [{ event_message: 'start', timestamp: new Date().toISOString() }]).expect(200);
    const source = await t.context.sources.get(name);
    const table = source.table_name;
    const partitions = await listPartitions(t.context.db.pool, table);
    const dayOf = Math.floor(Date.now() / DAY) * DAY;
    const today = partitions.find((p) => p.dayMs === dayOf)!;
    const yesterday = partitions.find((p) => p.dayMs === dayOf - DAY)!;
    // The clock of the upkeep and of the translation: hours 0–2 of today are over (and 2 minutes more), hour 3 is not.
    const nowMs = today.dayMs + 3 * SEARCH_HOUR_MS + 5 * 60_000;
    // Rows enough for the hours to be worth indexes: spread over yesterday and today's hours 0–3, a needle in hour 1
    // of each day and one in today's hour 3 (not over: read without an hourly index).
    const rows = HOURLY_MIN_ROWS + 1_000;
    const columns = (
      await sql<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = 'logs' AND table_name = $1 ORDER BY ordinal_position`,
        [table],
      )
    ).map((c) => `"${c.column_name}"`);
    const hot = columns.filter((c) => !['"id"', '"timestamp"', '"event_message"', '"project"', '"metadata"', '"body"'].includes(c));
    await quiet(table);
    for (const [day, span] of [
      [yesterday.dayMs, DAY],
      [today.dayMs, 4 * SEARCH_HOUR_MS],
    ] as const)
      await sql(
        `INSERT INTO logs."${table}" (id, "timestamp", event_message, project, metadata, body${hot.map((c) => ', ' + c).join('')})
         SELECT gen_random_uuid()::text, to_timestamp(($1::bigint + g * ($2::bigint / $3::bigint)) / 1000.0),
                'GET /rest/v1/todos ' || md5(g::text), 'p', '[]'::jsonb, '{}'::jsonb${hot.map(() => ', NULL').join('')}
           FROM generate_series(0, $3::bigint - 1) g`,
        [day, span, rows],
      );
    const needles = [yesterday.dayMs + SEARCH_HOUR_MS + 1, today.dayMs + SEARCH_HOUR_MS + 1, today.dayMs + 3 * SEARCH_HOUR_MS + 60_000];
    for (const [i, ms] of needles.entries())
      await sql(
        `INSERT INTO logs."${table}" (id, "timestamp", event_message, project, metadata, body${hot.map((c) => ', ' + c).join('')})
         VALUES ($1, to_timestamp($2::bigint / 1000.0), $3, 'p', '[]'::jsonb, '{}'::jsonb${hot.map(() => ', NULL').join('')})`,
        [`needle-${i}`, ms, `GET /rest/v1/todos needle-7e1c${i}`],
      );
    await sql(`ANALYZE logs."${today.name}", logs."${yesterday.name}"`);

    let rare: Record<string, string> = {};
    const hourly = (p: { name: string; dayMs: number }, n: number) =>
      hourlySearchIndexes(
        p.name,
        ['event_message'],
        Array.from({ length: n }, (_, h) => p.dayMs + h * SEARCH_HOUR_MS),
        rare,
      ).map((i) => i.name);
    const names = async () =>
      (await searchIndexesOf(table))
        .filter((i) => i.valid)
        .map((i) => i.name)
        .sort();
    await quiet(table);
    const done = await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, source.search_index, nowMs);
    // The day before, over, is busy: its common trigrams are measured and frozen before any build,
    // so every index here is a rare-trigram one.
    rare = await rareOf(table);
    assert.match(rare.event_message ?? '', /^logs\.search_rare_trigrams_[0-9a-f]{12}$/, done.join('\n'));
    const froze = done.findIndex((d) => d.startsWith('froze'));
    assert.ok(froze >= 0 && froze < done.findIndex((d) => d.startsWith('built')), done.join('\n'));
    const dayIndexes = partitions.filter((p) => p.dayMs + DAY <= nowMs).map((p) => searchIndexes(p.name, ['event_message'], rare)[0].name);
    // The day before's hours are built first (its own index was not valid yet: a busy day's takes
    // minutes), then dropped in the same run once its own is valid.
    const yesterdayHours = hourly(yesterday, 24);
    const built = done.filter((d) => d.startsWith('built ')).map((d) => d.split(' ')[1]);
    const dropped = done.filter((d) => d.startsWith('dropped ')).map((d) => d.split(' ')[1]);
    assert.deepEqual(built.slice(0, 24), yesterdayHours, done.join('\n'));
    assert.ok(built.indexOf(searchIndexes(yesterday.name, ['event_message'], rare)[0].name) > 24, done.join('\n'));
    assert.deepEqual(dropped.sort(), [...yesterdayHours].sort(), done.join('\n'));
    assert.deepEqual(await names(), [...hourly(today, 3), ...dayIndexes].sort(), "today's hours over, the finished days");
    const def = (await searchIndexesOf(table)).find((i) => i.name === hourly(today, 1)[0])!;
    assert.match(
      def.def,
      /USING gin \(logs\.search_rare_trigrams_[0-9a-f]{12}\(event_message\)\) WITH \(fastupdate='?off'?\) WHERE \("timestamp" <@ '\[".*"\)'::tstzrange\)/,
    );
    assert.deepEqual(await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, source.search_index, nowMs), [], 'once');

    // The search, split by the hours of the same clock: each hour over of today through its index, the same rows as unsplit.
    await initTranslator();
    await t.context.sources.reload();
    const query = `select id from \`${name}\` where regexp_contains(event_message, 'needle-7e1c') order by timestamp`;
    const split = translateQuery({ query, sources: t.context.sources.lookup, searchHours: searchHoursAt(nowMs) });
    const plain = translateQuery({ query, sources: t.context.sources.lookup });
    const client = await t.context.db.pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off');
      const plan = (await client.query(`EXPLAIN ${split.sql}`)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      for (const index of hourly(today, 3)) assert.match(plan, new RegExp(`Bitmap Index Scan on ${index}`), plan);
      assert.match(
        plan,
        new RegExp(`Bitmap Index Scan on ${searchIndexes(yesterday.name, ['event_message'], rare)[0].name}`),
        'the day before through its own',
      );
      const found = async (text: string) => (await client.query(text)).rows.map((r: { id: string }) => r.id);
      assert.deepEqual(await found(split.sql), ['needle-0', 'needle-1', 'needle-2']);
      assert.deepEqual(await found(plain.sql), ['needle-0', 'needle-1', 'needle-2']);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it("when a column's common trigrams are frozen after its days got plain indexes (an upgrade), then each is rebuilt on the rare-trigram function and the plain one dropped only once it is valid, and a search reads the new one", async () => {
    const name = `search.upgrade.${suffix}`;
    await send('post', '/api/sources', { name }).expect(201);
    const yesterdayMs = Math.floor(Date.now() / DAY) * DAY - DAY;
    await ingest(
      name,
      Array.from({ length: 300 }, (_, i) => ({
        event_message: `GET /rest/v1/todos req=${(i * 7919).toString(16).padStart(6, '0')} ua=Mozilla/5.0`,
        timestamp: new Date(yesterdayMs + 60_000 + i * 1000).toISOString(),
      })),
    ).expect(200);
    const source = await t.context.sources.get(name);
    const table = source.table_name;
    const yesterday = (await listPartitions(t.context.db.pool, table)).find((p) => p.dayMs === yesterdayMs)!;
    await quiet(table);
    // As the version before the rare-trigram index left it: a plain index on the finished day, nothing frozen.
    const plain = searchIndexes(yesterday.name, ['event_message'])[0].name;
    await sql(`DELETE FROM search_common_trigrams WHERE table_name = $1`, [table]);
    for (const i of await searchIndexesOf(table)) await sql(`DROP INDEX logs."${i.name}"`);
    await sql(`CREATE INDEX "${plain}" ON logs."${yesterday.name}" USING gin (event_message gin_trgm_ops) WITH (fastupdate = off)`);
    await sql(`ANALYZE logs."${yesterday.name}"`);

    const nowMs = yesterdayMs + DAY + 60_000;
    const done = await upkeepIndexes(t.context.db.pool, table, source.hot_leaves!, source.search_index, nowMs);
    const rare = await rareOf(table);
    assert.ok(rare.event_message, done.join('\n'));
    const rebuilt = searchIndexes(yesterday.name, ['event_message'], rare)[0].name;
    assert.notEqual(rebuilt, plain);
    const at = (step: string) => done.indexOf(step);
    assert.ok(
      at(`built ${rebuilt} on ${yesterday.name}`) >= 0 && at(`dropped ${plain}`) > at(`built ${rebuilt} on ${yesterday.name}`),
      done.join('\n'),
    );
    const indexes = (await searchIndexesOf(table)).filter((i) => i.relation === yesterday.name);
    assert.deepEqual(
      indexes.map((i) => [i.name, i.valid]),
      [[rebuilt, true]],
    );
    assert.ok(indexes[0].def.includes(`USING gin (${rare.event_message}(event_message))`), indexes[0].def);

    await initTranslator();
    await t.context.sources.reload();
    const needle = (17 * 7919).toString(16).padStart(6, '0');
    const { sql: text } = translateQuery({
      query: `select id from \`${name}\` where regexp_contains(event_message, 'req=${needle} ua') order by timestamp`,
      sources: t.context.sources.lookup,
    });
    const client = await t.context.db.pool.connect();
    try {
      await client.query('BEGIN; SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off');
      const plan = (await client.query(`EXPLAIN ${text}`)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      assert.match(plan, new RegExp(`Bitmap Index Scan on ${rebuilt}`), plan);
      assert.equal((await client.query(text)).rows.length, 1);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});
