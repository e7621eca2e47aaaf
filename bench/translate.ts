/**
 * Parse + translate time of the seeded queries, after warm-up: median of many runs, with and
 * without the libpg-query validation of the printed SQL (wall 2), best of a few rounds (the
 * machine is shared, so single rounds vary). Writes BENCHMARKS.md's "Translation" section.
 *
 *   npx tsx bench/translate.ts
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { initTranslator, translateQuery } from '../src/sql/index.js';
import { parseQuery } from '../src/sql/parser.js';
import { resolveQuery, TranslationState } from '../src/sql/resolve.js';
import { printQuery } from '../src/sql/postgres/print.js';
import { validatePostgres } from '../src/sql/validate.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../src/sql/seeded-queries.js';
import { sampleSources } from '../test/support/translation.js';

const WARMUP = 2_000;
const RUNS = 5_000;
const ROUNDS = 3;
const sources = sampleSources();

/** Lowest of ROUNDS medians, in µs. */
function medianMicros(run: () => void): number {
  for (let i = 0; i < WARMUP; i++) run();
  let best = Infinity;
  const times = new Float64Array(RUNS);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      run();
      times[i] = performance.now() - start;
    }
    times.sort();
    best = Math.min(best, times[RUNS >> 1]! * 1000);
  }
  return best;
}

/** Parse + resolve + print, as translateQuery does, minus the validation. */
function translateWithoutValidation(query: string): void {
  const resolved = resolveQuery(parseQuery(query), { translation: new TranslationState(), text: query, sources, ctes: new Map() });
  printQuery(resolved.query);
}

await initTranslator();
const rows: string[] = [];
for (const [name, query] of [['usage.api-counts', USAGE_API_COUNTS_SQL], ['logs.all', LOGS_ALL_SQL]] as const) {
  const without = medianMicros(() => translateWithoutValidation(query));
  const withValidation = medianMicros(() => translateQuery({ query, sources, maxRows: 1000 }));
  const sql = translateQuery({ query, sources, maxRows: 1000 }).sql;
  const validation = medianMicros(() => validatePostgres(sql));
  rows.push(`| ${name} | ${without.toFixed(1)} | ${withValidation.toFixed(1)} | ${validation.toFixed(1)} |`);
}

const date = new Date().toISOString().slice(0, 10);
const section = [
  '## Translation',
  '',
  `Median µs per call after ${WARMUP} warm-up calls, ${RUNS} timed calls, best of ${ROUNDS} rounds (\`npx tsx bench/translate.ts\`, ${date}, Node ${process.version}; 2 cores shared with Postgres and other work, load average ${loadavg()[0]!.toFixed(1)}).`,
  'Target: parse + translate under 100 µs. "with validation" is the full `translateQuery`, including the libpg-query parse of the printed SQL (wall 2).',
  'Translations are cached per endpoint version by the caller, so these costs are paid once per endpoint version or distinct sandboxed `sql`.',
  '',
  '| query | parse + translate | with validation | validation alone |',
  '|---|---:|---:|---:|',
  ...rows,
  '',
].join('\n');
console.log(section);

const file = new URL('../BENCHMARKS.md', import.meta.url);
const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n\n';
const pattern = /## Translation\n[\s\S]*?(?=\n## |$)/;
const next = pattern.test(current) ? current.replace(pattern, section) : `${current.trimEnd()}\n\n${section}`;
writeFileSync(file, next.endsWith('\n') ? next : next + '\n');
