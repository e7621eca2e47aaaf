/**
 * Hot leaves (src/storage/hotLeaves.ts, src/sql/resolve/hot.ts) must never change rows: each
 * query here is translated twice on the same data, reading the default sources' hot columns and
 * reading only the JSON (the same sources without hot leaves), and both must return the same rows.
 * The data has what the columns cannot hold and must then be read from the JSON: a missing
 * record, a missing key, JSON null, values of another type than the column's, and a day whose
 * rows were written before the columns existed (columns NULL, as before a backfill).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../src/sql/seeded-queries.js';
import type { SourceLookup, SourceTable } from '../../src/sources/schema.js';
import { demoEvents } from '../../seeds/demo-events.js';
import { SCENARIOS } from '../../bench/queries.js';
import { insertEvents, loadSources, testDatabase } from '../support/db.js';
import { AIMED, FINAL_LIMIT, dashboardLogsAllQueries, generated, outcomeOf, withProject } from '../support/differentialQueries.js';
import type { TranslationOptions } from '../support/translation.js';

const P = `hot-${Date.now().toString(36)}`;
const NOW = Date.now();
const DAY_MS = 86_400_000;

type Row = Record<string, unknown>;

let hot: SourceLookup;
let cold: SourceLookup;

/** The rows of `bq` reading the hot columns and reading the JSON; a Postgres error counts as the outcome. */
async function assertSameRows(bq: string, options: TranslationOptions = {}): Promise<{ length: number; usesColumns: boolean }> {
  const outcome = (sources: SourceLookup) => outcomeOf(bq, { ...options, sources });
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

describe('differential: hot leaf columns give the rows of the JSON reads', function () {
  this.timeout(180_000);

  before(async () => {
    hot = await loadSources();
    const stripped = new Map<string, SourceTable | undefined>();
    cold = (name) => {
      if (!stripped.has(name)) {
        const t = hot(name);
        stripped.set(name, t && { name: t.name, schema: t.schema, table: t.table, fields: t.fields });
      }
      return stripped.get(name);
    };
    assert.ok(hot('cloudflare.logs.prod')?.hot?.length, 'the edge logs have default hot leaves');
    for (const [source, events] of demoEvents(NOW, 400)) {
      await insertEvents(
        source,
        events.map((e) => withProject(e as Row, P)),
      );
    }
    const at = (ms: number) => new Date(NOW - ms).toISOString();
    await insertEvents('cloudflare.logs.prod', [
      { project: P, timestamp: at(60_000), event_message: 'no request', metadata: { response: { status_code: 502 }, request: [] } },
      { project: P, timestamp: at(90_000), event_message: 'no metadata' },
      { project: P, timestamp: at(100_000), event_message: 'no keys', metadata: { request: {}, response: {} } },
      {
        project: P,
        timestamp: at(110_000),
        event_message: 'JSON nulls',
        metadata: { request: { method: null, path: null, url: null }, response: { status_code: null } },
      },
    ]);
    // Values of another type than the column's, written as the writer writes them (column NULL)
    // but without merging them into the schema, which other tests rely on.
    const { pool } = await testDatabase();
    await pool.query(
      `INSERT INTO logs.cloudflare_logs_prod (id, "timestamp", event_message, project, metadata)
       VALUES ('odd-1', $2, 'status as text', $1, '[{"request":[{"method":"GET","path":42,"url":"https://${P}.supabase.co/rest/v1/odd"}],"response":[{"status_code":"503"}]}]'),
              ('odd-2', $3, 'method as bool', $1, '[{"request":[{"method":true,"path":"/rest/v1/odd","url":"https://${P}.supabase.co/rest/v1/odd"}],"response":[{"status_code":404}]}]')`,
      [P, at(130_000), at(140_000)],
    );
    // A day written before the columns existed: its columns are NULL (as until its backfill).
    await pool.query(
      `UPDATE logs.cloudflare_logs_prod SET "metadata.request.path" = NULL, "metadata.request.url" = NULL,
              "metadata.request.method" = NULL, "metadata.response.status_code" = NULL
        WHERE project = $1 AND "timestamp" < $2 AND "timestamp" >= $3`,
      [P, new Date(NOW - DAY_MS), new Date(NOW - 2 * DAY_MS)],
    );
    await pool.query(`UPDATE logs.postgres_logs SET "metadata.parsed.error_severity" = NULL WHERE project = $1 AND "timestamp" < $2`, [
      P,
      new Date(NOW - DAY_MS),
    ]);
    const { rows } = await pool.query(
      `SELECT count(*) FILTER (WHERE "metadata.response.status_code" IS NOT NULL)::int AS filled,
              count(*) FILTER (WHERE "metadata.response.status_code" IS NULL)::int AS unfilled
         FROM logs.cloudflare_logs_prod WHERE project = $1`,
      [P],
    );
    assert.ok(rows[0].filled > 100 && rows[0].unfilled > 20, `filled and unfilled rows: ${JSON.stringify(rows[0])}`);
  });

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
});
