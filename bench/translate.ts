/**
 * Translation time of the seeded queries and of the sandboxed scenarios (bench/queries.ts), after
 * warm-up: median of many runs, best of a few rounds (the machine is shared, so single rounds
 * vary). Writes BENCHMARKS.md's "Translation" section unless --no-write.
 *
 *   npx tsx bench/translate.ts [--no-write]
 *
 * "parse + translate" is translateQuery without the libpg-query validation of the printed SQL
 * (wall 2): parse, resolve, the tree rewrites, print. A sandboxed scenario is timed with a caller
 * `sql` that no earlier call sent (a counter in a trailing comment), so each call pays for a new
 * caller's parse, resolution and printing; the endpoint's nine CTEs are resolved once and reused,
 * as in the service (src/sql/index.ts). "first call" is the same with an endpoint text never
 * seen before as well (nothing reused).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { initTranslator, translateQuery, translateWithoutValidation, validatePostgres } from '../src/sql/index.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../seeds/queries.js';
import { sampleSources } from '../test/support/translation.js';
import { SCENARIOS } from './queries.js';

const WARMUP = 2_000;
const RUNS = 5_000;
const ROUNDS = 3;
const START = '<!-- translate-bench:start -->';
const END = '<!-- translate-bench:end -->';
const INTRO =
  '`npx tsx bench/translate.ts`: parse + translate of the seeded queries and the sandboxed scenarios (target: under 100 µs each), and the full `translateQuery` including the libpg-query validation of the printed SQL (wall 2).';
const sources = sampleSources();
const WRITE = !process.argv.includes('--no-write');

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
    best = Math.min(best, times[RUNS >> 1] * 1000);
  }
  return best;
}

let calls = 0;
/** `text` with a trailing comment no earlier call had: a text the translator has not seen. */
const unseen = (text: string): string => `${text}\n-- call ${++calls}`;

await initTranslator();
const rows: string[] = [];
const items: { name: string; query: string; sql?: string }[] = [
  { name: 'usage.api-counts', query: USAGE_API_COUNTS_SQL },
  { name: 'logs.all', query: LOGS_ALL_SQL },
  ...SCENARIOS.filter((s) => s.sql).map((s) => ({ name: `${s.id} (sandboxed over logs.all)`, query: LOGS_ALL_SQL, sql: s.sql })),
];
for (const { name, query, sql } of items) {
  const input = { query, sources, maxRows: 1000 };
  const caller = sql === undefined ? undefined : () => unseen(sql);
  const without = medianMicros(() => translateWithoutValidation({ ...input, sandboxSql: caller?.() }));
  const withValidation = medianMicros(() => translateQuery({ ...input, sandboxSql: caller?.() }));
  const first =
    sql === undefined
      ? undefined
      : medianMicros(() => translateWithoutValidation({ ...input, query: unseen(query), sandboxSql: unseen(sql) }));
  const printed = translateQuery({ ...input, sandboxSql: sql }).sql;
  const validation = medianMicros(() => validatePostgres(printed));
  rows.push(
    `| ${name} | ${without.toFixed(1)} | ${first === undefined ? '' : first.toFixed(1)} | ${withValidation.toFixed(1)} | ${validation.toFixed(1)} |`,
  );
  console.error(rows[rows.length - 1]);
}

const date = new Date().toISOString().slice(0, 10);
const latest = [
  START,
  `Latest run: ${date}, Node ${process.version}, median µs per call after ${WARMUP} warm-up calls, ${RUNS} timed calls, best of ${ROUNDS} rounds; load average ${loadavg()[0].toFixed(1)} on 2 cores shared with Postgres and other work. Sandboxed: a new caller \`sql\` per call over the endpoint's reused CTEs; "first call": nothing reused.`,
  '',
  '| query | parse + translate | first call | with validation | validation alone |',
  '|---|---:|---:|---:|---:|',
  ...rows,
  END,
].join('\n');
console.log(latest);

if (WRITE) {
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  writeFileSync(file, withLatestRun(current, latest));
}

/** Replaces the marked block of the "Translation" section, creating the section when missing; hand-written notes stay. */
function withLatestRun(markdown: string, block: string): string {
  const marked = new RegExp(`${START}[\\s\\S]*?${END}`);
  if (marked.test(markdown)) return markdown.replace(marked, block);
  const section = /## Translation\n[\s\S]*?(?=\n## |$)/;
  if (section.test(markdown)) return markdown.replace(section, (text) => `${text.trimEnd()}\n\n${block}\n`);
  return `${markdown.trimEnd()}\n\n## Translation\n\n${INTRO}\n\n${block}\n`;
}
