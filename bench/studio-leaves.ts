/**
 * The hot leaves Studio's API report reads, measured before/after on a copy of a bench database
 * (bench/studio.ts `--database`): `lq_studio_leaves_<size>` is made from `lq_bench_<size>` as a
 * template (the shared database is not changed), the edge source gets the report's fields as hot
 * leaves on top of its defaults (src/sources/defaults.ts), and the service's own backfill and
 * index upkeep fill and index them, timed.
 *
 *   npx tsx bench/studio-leaves.ts [--size 1m]     # then: npx tsx bench/studio.ts --size 1m --database lq_studio_leaves_1m
 *   npx tsx bench/studio-leaves.ts --drop [--size 1m]
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createContext } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { DEFAULT_HOT_LEAVES } from '../src/sources/defaults.js';
import { ADMIN_URL, databaseUrl, testConfig } from '../test/support/db.js';
import { benchEnv } from './data.js';

const { values: opts } = parseArgs({ options: { size: { type: 'string', default: '1m' }, drop: { type: 'boolean' } } });
const name = `lq_studio_leaves_${opts.size}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
if (opts.drop) {
  await admin.end();
  process.exit(0);
}
let started = performance.now();
await admin.query(`CREATE DATABASE "${name}" TEMPLATE "lq_bench_${opts.size}"`);
await admin.end();
console.error(`copied lq_bench_${opts.size} in ${((performance.now() - started) / 1000).toFixed(0)} s`);

/**
 * What the API report reads besides the default leaves (test/compat/studio/queries.json
 * `reports/api/*`): `request.search` (3 of its 8 queries group by it), `response.origin_time`
 * (2 average it), `request.cf.country` (requests by country), `response.headers.content_length`
 * (network traffic), and `request.headers.cf_connecting_ip`, which every request through the
 * edge has, so its column stands for the `unnest(request.headers)` guard all 8 queries have
 * (hotLeafFacts.ts: dense from that depth).
 */
export const REPORT_LEAVES = [
  { path: 'metadata.request.search', type: 'STRING', index: 'project' },
  { path: 'metadata.response.origin_time', type: 'INT64', index: 'project' },
  { path: 'metadata.request.cf.country', type: 'STRING', index: 'project' },
  { path: 'metadata.response.headers.content_length', type: 'STRING', index: 'project' },
  { path: 'metadata.request.headers.cf_connecting_ip', type: 'STRING', index: 'project' },
] as const;

const ctx = await createContext(testConfig(databaseUrl(ADMIN_URL, name), benchEnv()), createLogger('silent'));
try {
  started = performance.now();
  await ctx.sources.setHotLeaves('cloudflare.logs.prod', [...DEFAULT_HOT_LEAVES['cloudflare.logs.prod'], ...REPORT_LEAVES]);
  for (;;) {
    const done = await ctx.sources.runHotLeafBackfill();
    if (!done.length) break;
    console.error(done.join('\n'));
  }
  const backfill = (performance.now() - started) / 1000;
  started = performance.now();
  for (;;) {
    const done = await ctx.sources.runIndexUpkeep();
    if (!done.length) break;
    console.error(done.join('\n'));
  }
  const indexes = (performance.now() - started) / 1000;
  const { rows } = await ctx.db.pool.query<{ bytes: string }>(`SELECT pg_total_relation_size('logs.cloudflare_logs_prod') AS bytes`);
  const sizes = await ctx.db.pool.query<{ bytes: string }>(
    `SELECT sum(pg_total_relation_size(inhrelid))::bigint AS bytes FROM pg_inherits WHERE inhparent = 'logs.cloudflare_logs_prod'::regclass`,
  );
  console.log(
    JSON.stringify({
      database: name,
      backfillSeconds: backfill,
      indexSeconds: indexes,
      edgeBytes: Number(sizes.rows[0].bytes ?? rows[0].bytes),
    }),
  );
} finally {
  await ctx.close();
}
