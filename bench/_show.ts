import { initTranslator } from '../src/sql/index.js';
import { createContext } from '../src/context.js';
import { createLogger } from '../src/logger.js';
import { testConfig } from '../test/support/db.js';
import { benchEnv } from './data.js';
import { SCENARIOS, translatedScenario } from './queries.js';
const ctx = await createContext(testConfig('postgres://postgres@127.0.0.1:5432/lq_bench_1m', benchEnv()), createLogger('silent'));
await initTranslator(); await ctx.sources.reload();
for (const s of SCENARIOS) { if (process.argv[2] && s.id !== process.argv[2]) continue; const q = translatedScenario(s, ctx.sources.lookup, Date.now()); console.log(q.text.replace(/\$(\d+)/g, (_, n) => "'" + String(q.values[Number(n) - 1]) + "'") + ';'); }
process.exit(0);
