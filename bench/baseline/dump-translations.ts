/**
 * The translations of the benchmark scenarios (bench/queries.ts) by the service as issue 17
 * found it, before hot leaves (commit 4d4c574), so bench/hot.ts can run them beside today's on
 * the same data: bench/baseline/service-before-hot-leaves.json is this script's output.
 *
 *   git worktree add /tmp/before 4d4c574 && cp bench/baseline/dump-translations.ts /tmp/before/bench/baseline/
 *   (cd /tmp/before && npm ci && npx tsx bench/baseline/dump-translations.ts) > bench/baseline/service-before-hot-leaves.json
 *
 * It reads the sources' schemas from the bench database (bench/data.ts) and nothing else.
 */
import pg from 'pg';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../seeds/queries.js';
import { SCENARIOS } from '../queries.js';
const c = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/lq_bench_1m' });
await c.connect();
const { rows } = await c.query('SELECT name, table_name, schema FROM sources');
const map = new Map(rows.map((r) => [r.name, { name: r.name, pgSchema: 'logs', table: r.table_name, fields: r.schema }]));
await initTranslator();
const out: Record<string, { sql: string; parameters: string[] }> = {};
for (const s of SCENARIOS) {
  const query = s.endpoint === 'logs.all' ? LOGS_ALL_SQL : USAGE_API_COUNTS_SQL;
  const t = translateQuery({ query, sandboxSql: s.sql, sources: (n: string) => map.get(n), maxRows: 1000 });
  out[s.id] = { sql: t.sql, parameters: t.parameters };
}
console.log(JSON.stringify(out, null, 1));
await c.end();
