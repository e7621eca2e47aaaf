/**
 * Parse + translate time of the seeded queries, after warm-up: median of many runs, with and
 * without the libpg-query validation of the printed SQL (wall 2), best of a few rounds (the
 * machine is shared, so single rounds vary). Writes BENCHMARKS.md's "Translation" section.
 *
 *   npx tsx bench/translate.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
const START = '<!-- translate-bench:start -->';
const END = '<!-- translate-bench:end -->';
const INTRO = '`npx tsx bench/translate.ts`: parse + translate of the seeded queries (target: under 100 µs each), and the full `translateQuery` including the libpg-query validation of the printed SQL (wall 2).';
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
const latest = [
  START,
  `Latest run: ${date}, Node ${process.version}, median µs per call after ${WARMUP} warm-up calls, ${RUNS} timed calls, best of ${ROUNDS} rounds; load average ${loadavg()[0]!.toFixed(1)} on 2 cores shared with Postgres and other work.`,
  '',
  '| query | parse + translate | with validation | validation alone |',
  '|---|---:|---:|---:|',
  ...rows,
  END,
].join('\n');
console.log(latest);

const file = new URL('../BENCHMARKS.md', import.meta.url);
const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
writeFileSync(file, withLatestRun(current, latest));

/** Replaces the marked block of the "Translation" section, creating the section when missing; hand-written notes stay. */
function withLatestRun(markdown: string, block: string): string {
  const marked = new RegExp(`${START}[\\s\\S]*?${END}`);
  if (marked.test(markdown)) return markdown.replace(marked, block);
  const section = /## Translation\n[\s\S]*?(?=\n## |$)/;
  if (section.test(markdown)) return markdown.replace(section, (text) => `${text.trimEnd()}\n\n${block}\n`);
  return `${markdown.trimEnd()}\n\n## Translation\n\n${INTRO}\n\n${block}\n`;
}
