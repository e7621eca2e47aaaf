/**
 * Scaling of one Postgres (docs/SCALING.md): the same generator as the benchmarks (bench/data.ts)
 * at three sizes in databases of their own, `lq_scale_*`, and the benchmark queries
 * (bench/queries.ts) and ingest measured on each.
 *
 *   npx tsx bench/scaling.ts generate [1m,5m,25m]   COPY the data (reused when complete)
 *   npx tsx bench/scaling.ts measure  [1m,5m,25m]   window queries and ingest on each
 *   npx tsx bench/scaling.ts drop                   drop every lq_scale_* database
 *
 * Sizes: `1m` 1M rows over 8 days (125k events/day), `5m` 5M over 40 days (the same rate, 5× the
 * history), `25m` 25M over 40 days (5× the rate of `5m`, the same history).
 */
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { ensureData, type DataSpec } from './data.js';

export const SCALE_SIZES: Record<string, DataSpec> = {
  '1m': { name: 'lq_scale_1m', label: 'scale-1m', rows: 1_000_000, days: 8 },
  '5m': { name: 'lq_scale_5m', label: 'scale-5m', rows: 5_000_000, days: 40 },
  '25m': { name: 'lq_scale_25m', label: 'scale-25m', rows: 25_000_000, days: 40 },
};

const RESULTS = new URL('./results/scaling.json', import.meta.url);

function readResults(): Record<string, unknown> {
  return existsSync(RESULTS) ? JSON.parse(readFileSync(RESULTS, 'utf8')) : {};
}
function record(key: string, value: unknown): void {
  const all = readResults();
  all[key] = value;
  writeFileSync(RESULTS, JSON.stringify(all, null, 2));
}

const [command = 'generate', list = '1m,5m,25m'] = process.argv.slice(2);
const sizes = list.split(',');

if (command === 'generate') {
  for (const size of sizes) {
    const spec = SCALE_SIZES[size];
    if (!spec) throw new Error(`unknown size ${size}`);
    const log = (l: string) => console.log(`[${new Date().toISOString()}] ${l}`);
    const db = await ensureData(spec, { log });
    log(JSON.stringify(db));
    if (!db.reused) record(`generate-${size}`, { rows: db.rows, seconds: db.seconds, rowsPerSecond: Math.round(db.rows / db.seconds) });
  }
}
