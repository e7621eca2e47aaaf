/**
 * Hot leaves (src/storage/hotLeaves.ts, src/sql/resolve/hot.ts) must never change rows: each
 * query here is translated twice on the same data, reading the default sources' hot columns and
 * reading only the JSON (the same sources without hot leaves), and both must return the same rows.
 *
 * Three times, on a database of its own (the facts of a table are about all its rows), each time
 * with more of what the columns cannot hold:
 * - where the columns are complete (src/storage/hotLeafFacts.ts): the data has missing records
 *   and no `metadata` at all, but every leaf there is a value of its column's type, so the
 *   planner reads the columns alone and the plans do not read `metadata`;
 * - with records that lack the leaf (a missing key, JSON null): still exact, but the UNNEST
 *   guards must test the record;
 * - with values of another type than the column's (written by the writer, which notes them), and
 *   a day whose rows were written before the columns existed (columns NULL, as until a
 *   backfill): the JSON is read wherever the column is NULL.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type pg from 'pg';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../seeds/queries.js';
import { initTranslator } from '../../src/sql/index.js';
import type { SourceLookup, SourceTable } from '../../src/sources/schema.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import { unverifyFacts } from '../../src/storage/hotLeafFacts.js';
import { demoEvents } from '../../seeds/demo-events.js';
import { SCENARIOS, translatedScenario } from '../../bench/queries.js';
import { createEmptyDatabase, testConfig } from '../support/db.js';
import { AIMED, FINAL_LIMIT, dashboardLogsAllQueries, generated, outcomeOf, withProject } from '../support/differentialQueries.js';
import type { TranslationOptions } from '../support/translation.js';

const P = `hot-${Date.now().toString(36)}`;
const NOW = Date.now();
const DAY_MS = 86_400_000;
const EDGE = 'cloudflare_logs_prod';
const EDGE_LEAVES = ['metadata.request.path', 'metadata.request.url', 'metadata.request.method', 'metadata.response.status_code'];

type Row = Record<string, unknown>;

let ctx: AppContext;
let pool: pg.Pool;
let hot: SourceLookup;
let cold: SourceLookup;

/** The rows of `bq` reading the hot columns and reading the JSON; a Postgres error counts as the outcome. */
async function assertSameRows(bq: string, options: TranslationOptions = {}): Promise<{ length: number; usesColumns: boolean }> {
  const outcome = (sources: SourceLookup) => outcomeOf(bq, { ...options, sources, pool });
  const withColumns = await outcome(hot);
  const fromJson = await outcome(cold);
  const caller = options.sandboxSql ?? bq;
  if (FINAL_LIMIT.test(caller) && withColumns.rows.length === fromJson.rows.length) {
    // A top-N with ties may keep different rows of equal rank: compare without the LIMIT instead.
    const unlimited = caller.replace(FINAL_LIMIT, '');
    const all = await assertSameRows(options.sandboxSql === undefined ? unlimited : bq, {
      ...options,
      ...(options.sandboxSql !== undefined && { sandboxSql: unlimited }),
    });
    return { length: withColumns.rows.length, usesColumns: all.usesColumns };
  }
  assert.deepStrictEqual(
    withColumns.rows,
    fromJson.rows,
    `rows differ for:\n${caller}\n-- hot:\n${withColumns.sql}\n-- json:\n${fromJson.sql}`,
  );
  return { length: withColumns.rows.length, usesColumns: /"metadata\.[a-z_.]+"/.test(withColumns.sql) };
}

/** Stores events as ingest does; `fields` {} leaves the schema as it is (values of another type must not widen it). */
async function insert(sourceName: string, events: object[], mergeFields = true): Promise<void> {
  const source = await ctx.sources.get(sourceName);
  const batch = normaliseEvents(events, { nowMs: Date.now(), retentionDays: source.retention_days });
  assert.deepEqual(batch.errors, []);
  await ctx.writer.write(source, batch.rows, mergeFields ? batch.fields : {});
}

async function exact(path: string): Promise<boolean> {
  const { rows } = await pool.query('SELECT logs.hot_leaf_exact($1, $2) AS exact', [EDGE, path]);
  return rows[0].exact;
}

/** The plan of a benchmark scenario as the service would run it (the planner folds the facts while planning). */
async function plan(id: string): Promise<string> {
  const s = SCENARIOS.find((x) => x.id === id)!;
  const q = translatedScenario({ ...s, params: (now) => ({ ...s.params(now), project: P }) }, hot, NOW);
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>({ text: `EXPLAIN ${q.text}`, values: q.values });
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('differential: hot leaf columns give the rows of the JSON reads', function () {
  this.timeout(300_000);

  before(async () => {
    await initTranslator();
    ctx = await createContext(testConfig((await createEmptyDatabase('lq_hotdiff')).url), createLogger('silent'));
    pool = ctx.db.pool;
    await ctx.sources.reload();
    hot = ctx.sources.lookup;
    const stripped = new Map<string, SourceTable | undefined>();
    cold = (name) => {
      if (!stripped.has(name)) {
        const t = hot(name);
        stripped.set(name, t && { name: t.name, pgSchema: t.pgSchema, table: t.table, fields: t.fields });
      }
      return stripped.get(name);
    };
    assert.ok(hot('cloudflare.logs.prod')?.hot?.length, 'the edge logs have default hot leaves');
  });

  after(() => ctx?.close());

  describe('where the columns are complete: read alone', () => {
    before(async () => {
      for (const [source, events] of demoEvents(NOW, 400)) {
        await insert(
          source,
          events.map((e) => withProject(e as Row, P)),
        );
      }
      const at = (ms: number) => new Date(NOW - ms).toISOString();
      await insert('cloudflare.logs.prod', [
        { project: P, timestamp: at(60_000), event_message: 'no request', metadata: { response: { status_code: 502 }, request: [] } },
        { project: P, timestamp: at(90_000), event_message: 'no metadata' },
      ]);
      for (const path of EDGE_LEAVES) assert.equal(await exact(path), true, `${path} is complete`);
    });

    it('when a count of 5xx and the top paths are planned, then the plans read the columns and not metadata', async () => {
      for (const id of ['c-5xx', 'e-top-paths', 'a-chart']) assert.doesNotMatch(await plan(id), /metadata ->/, id);
    });

    comparisons();
  });

  describe('where the columns are exact but some rows have a record without the leaf: read alone, guards read the JSON', () => {
    before(async () => {
      const at = (ms: number) => new Date(NOW - ms).toISOString();
      await insert('cloudflare.logs.prod', [
        { project: P, timestamp: at(100_000), event_message: 'no keys', metadata: { request: {}, response: {} } },
        {
          project: P,
          timestamp: at(110_000),
          event_message: 'JSON nulls',
          metadata: { request: { method: null, path: null, url: null }, response: { status_code: null } },
        },
      ]);
      for (const path of EDGE_LEAVES) assert.equal(await exact(path), true, `${path} is still exact`);
      const { rows } = await pool.query('SELECT logs.hot_leaf_dense($1, $2, 1) AS dense', [EDGE, 'metadata.response.status_code']);
      assert.equal(rows[0].dense, false, 'a response without status_code: the guard of UNNEST(response) must read the record');
    });

    comparisons();
  });

  describe('where they are not: read where filled, from the JSON elsewhere', () => {
    before(async () => {
      const at = (ms: number) => new Date(NOW - ms).toISOString();
      // Values of another type than the column's: the writer leaves the column NULL and notes
      // the leaf as inexact, in the same transaction.
      await insert(
        'cloudflare.logs.prod',
        [
          {
            id: 'odd-1',
            project: P,
            timestamp: at(130_000),
            event_message: 'status as text',
            metadata: {
              request: { method: 'GET', path: 42, url: `https://${P}.supabase.co/rest/v1/odd` },
              response: { status_code: '503' },
            },
          },
          {
            id: 'odd-2',
            project: P,
            timestamp: at(140_000),
            event_message: 'method as bool',
            metadata: {
              request: { method: true, path: '/rest/v1/odd', url: `https://${P}.supabase.co/rest/v1/odd` },
              response: { status_code: 404 },
            },
          },
        ],
        false,
      );
      // A day written before the columns existed: its columns are NULL until its backfill, and
      // the leaves are not complete meanwhile (as a declaration on a table with data leaves them).
      await pool.query(
        `UPDATE logs.cloudflare_logs_prod SET "metadata.request.path" = NULL, "metadata.request.url" = NULL,
                "metadata.request.method" = NULL, "metadata.response.status_code" = NULL
          WHERE project = $1 AND "timestamp" < $2 AND "timestamp" >= $3`,
        [P, new Date(NOW - DAY_MS), new Date(NOW - 2 * DAY_MS)],
      );
      await unverifyFacts(pool, EDGE, EDGE_LEAVES);
      await pool.query(`UPDATE logs.postgres_logs SET "metadata.parsed.error_severity" = NULL WHERE project = $1 AND "timestamp" < $2`, [
        P,
        new Date(NOW - DAY_MS),
      ]);
      await unverifyFacts(pool, 'postgres_logs', ['metadata.parsed.error_severity']);
      const { rows } = await pool.query(
        `SELECT count(*) FILTER (WHERE "metadata.response.status_code" IS NOT NULL)::int AS filled,
                count(*) FILTER (WHERE "metadata.response.status_code" IS NULL)::int AS unfilled
           FROM logs.cloudflare_logs_prod WHERE project = $1`,
        [P],
      );
      assert.ok(rows[0].filled > 100 && rows[0].unfilled > 20, `filled and unfilled rows: ${JSON.stringify(rows[0])}`);
      for (const path of EDGE_LEAVES) assert.equal(await exact(path), false, `${path} is not complete`);
    });

    it('when a count of 5xx is planned, then the plan reads metadata where the column is NULL', async () => {
      assert.match(await plan('c-5xx'), /metadata ->/);
    });

    comparisons();
  });
});

/** The comparisons, on the data as it is when they run. */
function comparisons(): void {
  it('when queries aimed at each rewrite run, then the rows are the same', async () => {
    for (const bq of AIMED) {
      const { length } = await assertSameRows(bq, { params: { project: P } });
      assert.ok(length > 0, `no rows: ${bq}`);
    }
  });

  it('when generated queries read the hot leaves, then the rows are the same', async () => {
    let withRows = 0;
    let usingColumns = 0;
    await fc.assert(
      fc.asyncProperty(generated, async (bq) => {
        const r = await assertSameRows(bq, { params: { project: P } });
        if (r.length > 0) withRows++;
        if (r.usesColumns) usingColumns++;
      }),
      { numRuns: 120 },
    );
    assert.ok(withRows >= 60, `only ${withRows} of 120 generated queries returned rows`);
    assert.ok(usingColumns >= 60, `only ${usingColumns} of 120 generated queries read a hot column: the comparison would prove little`);
  });

  it('when the seeded endpoints and the benchmark scenarios run, then the rows are the same and the columns are read', async () => {
    for (const interval of ['minutely', 'hourly', 'daily', '1hr', '1day', '7day']) {
      const r = await assertSameRows(USAGE_API_COUNTS_SQL, { params: { interval, project: P } });
      assert.ok(r.usesColumns, 'usage.api-counts reads request.path and request.url from their columns');
    }
    assert.ok((await assertSameRows(LOGS_ALL_SQL, { params: { project: P } })).length > 0);
    for (const s of SCENARIOS) {
      const params = { ...s.params(NOW), project: P };
      const query = s.endpoint === 'logs.all' ? LOGS_ALL_SQL : USAGE_API_COUNTS_SQL;
      const r = await assertSameRows(query, { params, ...(s.sql && { sandboxSql: s.sql }) });
      if (s.sql) assert.ok(r.usesColumns, `scenario ${s.id} reads hot columns`);
    }
  });

  it("when the dashboard's queries run, then the rows are the same", async () => {
    const window = {
      project: P,
      iso_timestamp_start: new Date(NOW - 7 * DAY_MS).toISOString(),
      iso_timestamp_end: new Date(NOW + 60_000).toISOString(),
    };
    const queries = dashboardLogsAllQueries();
    for (const sql of queries) await assertSameRows(LOGS_ALL_SQL, { params: window, sandboxSql: sql });
    assert.ok(queries.length > 200, `${queries.length} dashboard queries compared`);
  });
}
