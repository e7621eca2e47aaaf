import pg from 'pg';
import { initTranslator } from '../src/sql/index.js';
import { createContext } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { testConfig } from '../test/support/db.js';
import { benchEnv } from '../bench/data.js';
import { PLANNER_OPTIONS } from '../src/db/readOnlySession.js';
import { SCENARIOS, translatedScenario } from '../bench/queries.js';
const ctx = await createContext(testConfig('postgres://postgres@127.0.0.1:5432/lq_bench_1m', benchEnv()), createLogger('silent'));
await initTranslator();
await ctx.sources.reload();
const c = new pg.Client({
  connectionString: 'postgres://postgres@127.0.0.1:5432/lq_bench_1m',
  options: `${PLANNER_OPTIONS} -c TimeZone=UTC`,
});
await c.connect();
for (const id of process.argv.slice(2)) {
  const s = SCENARIOS.find((x) => x.id === id)!;
  const q = translatedScenario(s, ctx.sources.lookup, Date.now());
  const f = s.floor(Date.now());
  for (const [name, qq] of [
    ['translated', q],
    ['floor', f],
  ] as const) {
    const pl: number[] = [],
      ex: number[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await c.query(`EXPLAIN (ANALYZE, SUMMARY, COSTS OFF, TIMING OFF) ${qq.text}`, qq.values);
      const t = r.rows.map((x) => x['QUERY PLAN']).join('\n');
      pl.push(Number(/Planning Time: ([\d.]+)/.exec(t)![1]));
      ex.push(Number(/Execution Time: ([\d.]+)/.exec(t)![1]));
    }
    pl.sort((a, b) => a - b);
    ex.sort((a, b) => a - b);
    console.log(id, name, 'plan', pl[4], 'exec', ex[4]);
  }
}
process.exit(0);
