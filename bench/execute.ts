/**
 * Per-query overhead of the read-only executor (src/query/execute.ts): N sequential runs of a
 * few small queries through `executeReadOnly`, on the reader's own connections (the service's
 * normal path on Postgres) and on the service's connections with SET LOCAL ROLE (the fallback),
 * interleaved with the floor: the same SQL and values as one bare `pg` query on a pooled
 * connection with the same session settings, and with both paths in three round trips
 * (`pipelined: false`, as before the one-round-trip batch), and with `pg`'s public pipeline mode
 * (a client with `pipeline: true`: BEGIN READ ONLY, the query and ROLLBACK sent without waiting,
 * one Sync each), the public-API way to one round trip. Prints medians (ms) and each path's
 * overhead over the floor.
 *
 *   npx tsx bench/execute.ts [--runs 300] [--size 1m]
 *
 * Uses lq_bench_<size> (bench/data.ts; topped up to now like `npm run bench`).
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createContext } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { executeReadOnly } from '../src/query/execute.js';
import { PLANNER_OPTIONS, readOnlySessionOptions } from '../src/db/readOnlySession.js';
import { readerUrl } from '../src/db/readerPool.js';
import { RAW_TYPES } from '../src/query/encode.js';
import { initTranslator, translateQuery } from '../src/sql/index.js';
import { LOGS_ALL_SQL } from '../seeds/queries.js';
import { testConfig } from '../test/support/db.js';
import { benchEnv, ensureBenchData, SIZES, type Size } from './data.js';
import { SCENARIOS } from './queries.js';

const { values: opts } = parseArgs({ options: { runs: { type: 'string', default: '300' }, size: { type: 'string', default: '1m' } } });
if (!(opts.size in SIZES)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const RUNS = Number(opts.runs);
const WARMUP = Math.min(50, Math.ceil(RUNS / 5));
const TIMEOUT_MS = 15_000;

const db = await ensureBenchData(opts.size as Size, { log: () => undefined });
await initTranslator();
const ctx = await createContext(testConfig(db.url, benchEnv()), createLogger('silent'));
if (!ctx.reader) throw new Error('no reader login on this database: only the fallback path could be measured');
const floorPool = new pg.Pool({ connectionString: db.url, max: 2, options: `-c TimeZone=UTC ${PLANNER_OPTIONS}` });
// Reader connections like ctx.reader's, in pg's pipeline mode.
const pipelinePool = new pg.Pool({
  connectionString: readerUrl(db.url).url,
  max: 2,
  options: readOnlySessionOptions(TIMEOUT_MS),
  pipeline: true,
});

const now = Date.now();
const queries: Array<{ id: string; sql: string; values: Array<string | null> }> = [{ id: 'SELECT 1', sql: 'SELECT 1', values: [] }];
for (const id of ['logs-all', 'd-newest']) {
  const s = SCENARIOS.find((x) => x.id === id)!;
  const t = translateQuery({ query: LOGS_ALL_SQL, sandboxSql: s.sql, sources: ctx.sources.lookup, maxRows: 1000 });
  const params = s.params(now);
  queries.push({ id, sql: t.sql, values: t.parameters.map((n) => params[n] ?? null) });
}

type Run = (sql: string, values: Array<string | null>) => Promise<unknown>;
const paths: Array<[string, Run]> = [
  ['floor (bare pg query)', (sql, values) => floorPool.query({ text: sql, values, rowMode: 'array', types: RAW_TYPES })],
  ['reader login', (sql, values) => executeReadOnly(ctx.reader!, sql, values, { timeoutMs: TIMEOUT_MS, useReaderRole: false })],
  ['fallback: SET LOCAL ROLE', (sql, values) => executeReadOnly(ctx.db.pool, sql, values, { timeoutMs: TIMEOUT_MS, useReaderRole: true })],
  // The three round trips the executor made before the pipelined batch (kept for the embedded PGlite).
  [
    'reader, 3 round trips',
    (sql, values) => executeReadOnly(ctx.reader!, sql, values, { timeoutMs: TIMEOUT_MS, useReaderRole: false, pipelined: false }),
  ],
  [
    'fallback, 3 round trips',
    (sql, values) => executeReadOnly(ctx.db.pool, sql, values, { timeoutMs: TIMEOUT_MS, useReaderRole: true, pipelined: false }),
  ],
  [
    'reader, pg pipeline mode',
    async (sql, values) => {
      const client = await pipelinePool.connect();
      try {
        const done = [
          client.query('BEGIN READ ONLY'),
          client.query({ text: sql, values, rowMode: 'array', types: RAW_TYPES }),
          client.query('ROLLBACK'),
        ];
        return (await Promise.all(done))[1];
      } finally {
        client.release();
      }
    },
  ],
];

const median = (a: number[]) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

console.log(`lq_bench_${opts.size}, ${RUNS} runs each (after ${WARMUP} warm-up), interleaved; medians in ms`);
for (const q of queries) {
  const times = paths.map(() => [] as number[]);
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (let p = 0; p < paths.length; p++) {
      const t0 = performance.now();
      await paths[p][1](q.sql, q.values);
      if (i >= WARMUP) times[p].push(performance.now() - t0);
    }
  }
  const floor = median(times[0]);
  console.log(`\n${q.id}`);
  paths.forEach(([name], p) => {
    const m = median(times[p]);
    console.log(
      `  ${name.padEnd(26)} ${m.toFixed(3).padStart(8)}${p === 0 ? '' : `   +${(m - floor).toFixed(3)} over the floor (${(m / floor).toFixed(2)}×)`}`,
    );
  });
}

await floorPool.end();
await pipelinePool.end();
await ctx.close();
