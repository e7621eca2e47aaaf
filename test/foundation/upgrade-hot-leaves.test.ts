/**
 * Starting a newer release on an install whose default sources have the hot leaves an earlier
 * release declared (src/sources/defaults.ts PREVIOUS_DEFAULT_HOT_LEAVES): they gain today's
 * defaults at start, the new columns are backfilled in the background with the same rows
 * throughout, and Studio's API report then reads only the covering index. Leaves someone chose
 * through the API are kept. On a database of its own: it changes the default edge source.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { defaultSourceSchema } from '../../src/ingest/defaultSchemas.js';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import { DEFAULT_HOT_LEAVES, PREVIOUS_DEFAULT_HOT_LEAVES } from '../../src/sources/defaults.js';
import { readFacts } from '../../src/storage/hotLeafFacts.js';
import type { HotLeaf } from '../../src/storage/hotLeaves.js';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';
import { createEmptyDatabase, testConfig } from '../support/db.js';

const EDGE = 'cloudflare.logs.prod';
const DAY_MS = 86_400_000;
const P = 'upgrade-leaves';
const previous = PREVIOUS_DEFAULT_HOT_LEAVES[0][EDGE];
const declared = (leaves: readonly HotLeaf[] | null) => (leaves ?? []).map((l) => ({ path: l.path, type: l.type, index: l.index }));
const apiReport = (
  JSON.parse(readFileSync(new URL('../compat/studio/queries.json', import.meta.url), 'utf8')) as { id: string; sql: string }[]
).filter((q) => /^reports\/api\/[A-Za-z]+$/.test(q.id));

/**
 * An edge request as the gateway logs it, with what the API report reads; every third without a
 * request body length. Every request has a country, as Cloudflare gives one to every request it
 * proxies (so `request.cf`'s guard is that column's: hotLeafFacts.ts, dense).
 */
function edgeEvent(i: number, ageMs: number): object {
  return {
    event_message: `GET | 200 | /rest/v1/t${i % 4}`,
    project: P,
    timestamp: new Date(Date.now() - ageMs).toISOString(),
    metadata: {
      request: {
        method: i % 5 ? 'GET' : 'POST',
        path: `/rest/v1/t${i % 4}`,
        search: i % 2 ? '?select=*' : '',
        url: `https://${P}.supabase.co/rest/v1/t${i % 4}`,
        cf: { country: ['DE', 'US', 'BR'][i % 3] },
        headers: { cf_connecting_ip: `10.0.0.${i % 250}`, ...(i % 3 && { content_length: String(10 * i) }) },
      },
      response: { status_code: i % 7 ? 200 : 500, origin_time: 5 + (i % 40), headers: { content_length: String(100 + i) } },
    },
  };
}

describe('upgrading an install: default hot leaves', function () {
  this.timeout(180_000);
  let ctx: AppContext;

  before(async () => {
    await initTranslator();
    // Dropped with the run's other databases (test/support/db.ts).
    const { url } = await createEmptyDatabase();
    ctx = await createContext(testConfig(url), createLogger('silent'));
  });
  after(() => ctx?.close());

  /**
   * Sets the edge source's leaves through the service, as the API does, and waits for the index
   * rebuild that dropping columns starts in the background (SourceService.setHotLeaves): this is
   * the state an earlier release left, not a change still under way.
   */
  const declare = async (leaves: readonly object[]) => {
    const { id } = await ctx.sources.setHotLeaves(EDGE, leaves);
    await ctx.upkeep.upkeepIndexesOf(id);
  };

  const write = async (events: object[]) => {
    const source = await ctx.sources.get(EDGE);
    const batch = normaliseEvents(events, { nowMs: Date.now(), retentionDays: source.retention_days });
    assert.deepEqual(batch.errors, []);
    await ctx.writer.write(source, batch.rows, batch.fields);
  };
  /** The API report's rows over 7 days for the project, each query sorted so the comparison ignores order. */
  const report = async () => {
    const end = new Date(Date.now() + 60_000).toISOString();
    const start = new Date(Date.now() - 7 * DAY_MS).toISOString();
    const out: Record<string, string[]> = {};
    for (const q of apiReport) {
      const t = translateQuery({ query: LOGS_ALL_SQL, sandboxSql: q.sql, sources: ctx.sources.lookup, maxRows: 1000 });
      const values = t.parameters.map((p) => ({ project: P, iso_timestamp_start: start, iso_timestamp_end: end })[p] ?? null);
      const { rows } = await ctx.db.pool.query(t.sql, values);
      out[q.id] = rows.map((r) => JSON.stringify(r)).sort();
    }
    return out;
  };

  it("when the edge source still has an earlier release's defaults, then start gives it today's, backfilled in the background with the same rows, and the API report reads only the covering index", async () => {
    assert.equal(apiReport.length, 8);
    // The install as the earlier release left it, with three days of rows.
    await declare(previous);
    for (let d = 0; d < 3; d++) await write(Array.from({ length: 60 }, (_, i) => edgeEvent(d * 60 + i, d * DAY_MS + 60_000 + i * 1000)));
    const before = await report();
    assert.equal(before['reports/api/requestsByCountry'].length, 3, JSON.stringify(before['reports/api/requestsByCountry']));

    await ctx.sources.ensureDefaults(defaultSourceSchema);
    const upgraded = (await ctx.sources.get(EDGE)).hot_leaves!;
    assert.deepEqual(declared(upgraded), declared(DEFAULT_HOT_LEAVES[EDGE]));
    const added = upgraded.filter((l) => !previous.some((p) => p.path === l.path));
    assert.equal(added.length, DEFAULT_HOT_LEAVES[EDGE].length - previous.length);
    for (const l of added) assert.ok(l.pending_partitions.length >= 3, `${l.path}: ${l.pending_partitions.join(', ')}`);
    for (const l of upgraded.filter((u) => !added.includes(u))) assert.deepEqual(l.pending_partitions, [], l.path);
    // Before the backfill: the new columns are empty for the old rows, read from the JSON.
    assert.deepEqual(await report(), before);
    await write([edgeEvent(1000, 30_000)]);
    const withNewRow = await report();

    while ((await ctx.upkeep.runHotLeafBackfill()).length);
    while ((await ctx.upkeep.runIndexUpkeep()).length);
    assert.deepEqual(await report(), withNewRow);
    const facts = await readFacts(ctx.db.pool, (await ctx.sources.get(EDGE)).table_name);
    // Exact: the report may read the columns alone (rows without a country are simply not dense there).
    for (const l of added) {
      const f = facts.find((x) => x.path === l.path);
      assert.deepEqual([f?.backfilled, f?.inexact], [true, false], l.path);
    }

    // Every query of the report, planned with its parameters: the edge table through its index alone.
    const table = (await ctx.sources.get(EDGE)).table_name;
    await ctx.db.pool.query(`VACUUM (ANALYZE) logs.${table}`);
    const client = await ctx.db.pool.connect();
    try {
      await client.query('BEGIN');
      // A few hundred rows: a sequential scan is as cheap, and would hide what the plan can do.
      await client.query('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off');
      for (const q of apiReport) {
        const t = translateQuery({ query: LOGS_ALL_SQL, sandboxSql: q.sql, sources: ctx.sources.lookup, maxRows: 1000 });
        const values = t.parameters.map(
          (p) => ({ project: P, iso_timestamp_start: new Date(Date.now() - 7 * DAY_MS).toISOString() })[p] ?? null,
        );
        const plan = (await client.query(`EXPLAIN ${t.sql}`, values)).rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
        assert.match(plan, /Index Only Scan using \S+ on cloudflare_logs_prod_p/, `${q.id}:\n${plan}`);
        assert.doesNotMatch(plan, /(Seq Scan|Index Scan using \S+) on cloudflare_logs_prod_p\d+ /, `${q.id}:\n${plan}`);
      }
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('when the leaves were chosen through the API, then start keeps them', async () => {
    for (const chosen of [
      [...previous, { path: 'metadata.request.host', type: 'STRING', index: 'project' }],
      previous.slice(1),
      [],
    ] as HotLeaf[][]) {
      await declare(chosen);
      await ctx.sources.ensureDefaults(defaultSourceSchema);
      assert.deepEqual(declared((await ctx.sources.get(EDGE)).hot_leaves), declared(chosen));
    }
  });

  it("when an install stored the earlier defaults before leaves named their index, then start gives it today's defaults", async () => {
    const source = await ctx.sources.get(EDGE);
    await declare(previous);
    const unnamed = (await ctx.sources.get(EDGE)).hot_leaves!.map(({ index: _index, ...l }) => l);
    await ctx.db
      .knex('sources')
      .where({ id: source.id })
      .update({ hot_leaves: JSON.stringify(unnamed), updated_at: ctx.db.knex.fn.now() });
    await ctx.sources.reload();
    await ctx.sources.ensureDefaults(defaultSourceSchema);
    assert.deepEqual(declared((await ctx.sources.get(EDGE)).hot_leaves), declared(DEFAULT_HOT_LEAVES[EDGE]));
  });
});
