/**
 * Fair scheduling (docs/API.md "Rate limits", src/rateLimit/scheduler.ts), as the dashboard meets
 * it: one key loads Studio's API report for the last 7 days (its 8 `logs.all` queries at once,
 * each with its own time window, test/compat/studio/queries.json), alone and while a second key
 * floods the service with 12 clients of heavy uncached scans (a 7-day search of every edge
 * message's lower case, which no index serves). The service is `src/main.ts` with its **default** limits and REDIS_URL, on
 * `lq_bench_1m` (bench/data.ts). Phases alternate (alone, flooded, alone, flooded), 5 page loads
 * each. Prints the figures and rewrites the block between the `fairness` markers in BENCHMARKS.md.
 *
 *   npx tsx bench/fairness.ts [--db lq_bench_1m] [--loads 5] [--no-write]
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateKey } from '../src/auth/keys.js';
import { loadConfig } from '../src/config.js';
import { freePort } from '../test/support/net.js';
import { ADMIN_URL, databaseUrl } from '../test/support/db.js';
import { BENCH_PROJECT } from './data.js';

const { values: opts } = parseArgs({
  options: {
    db: { type: 'string', default: 'lq_bench_1m' },
    loads: { type: 'string', default: '5' },
    'no-write': { type: 'boolean' },
  },
});
const LOADS = Number(opts.loads);
const FLOOD_CLIENTS = 12;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const DAY = 86_400_000;

interface StudioQuery {
  id: string;
  sql: string;
}
const REPORT_IDS = [
  'totalRequests',
  'topRoutes',
  'errorCounts',
  'topErrorRoutes',
  'responseSpeed',
  'topSlowRoutes',
  'networkTraffic',
  'requestsByCountry',
].map((id) => `reports/api/${id}`);
const corpus = JSON.parse(readFileSync(new URL('../test/compat/studio/queries.json', import.meta.url), 'utf8')) as StudioQuery[];
const REPORT = REPORT_IDS.map((id) => corpus.find((q) => q.id === id)!);

async function startService(admin: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      PATH: process.env.PATH!,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(ADMIN_URL, opts.db),
      REDIS_URL,
      ADMIN_API_KEY: admin,
      LOG_LEVEL: 'warn',
      LOAD_DEMO_DATA: 'false',
      // The bench data spans 8 days: keep them all (the only setting that is not a default).
      RETENTION_DAYS: '120',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 600) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return { base, stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function logsAll(base: string, params: Record<string, string>): string {
  return `${base}/api/endpoints/query/logs.all?${new URLSearchParams({ project: BENCH_PROJECT, ...params })}`;
}

/** One page load: the 8 queries at once, each with a window of its own (as the page's components ask at slightly different moments). */
async function loadPage(base: string, key: string, n: number): Promise<{ ms: number; statuses: number[] }> {
  const end = Date.now() - n * 1000;
  const started = performance.now();
  const statuses = await Promise.all(
    REPORT.map(async (q, i) => {
      const url = logsAll(base, {
        iso_timestamp_start: new Date(end - 7 * DAY - i).toISOString(),
        iso_timestamp_end: new Date(end - i).toISOString(),
        sql: q.sql,
      });
      const res = await fetch(url, { headers: { 'X-API-KEY': key } });
      await res.arrayBuffer();
      return res.status;
    }),
  );
  return { ms: performance.now() - started, statuses };
}

/** 12 clients sending heavy uncached scans back to back until stopped; counts answers by status. */
function flood(base: string, key: string) {
  let running = true;
  const statuses: Record<number, number> = {};
  let n = 0;
  const clients = Array.from({ length: FLOOD_CLIENTS }, async () => {
    while (running) {
      const url = logsAll(base, {
        iso_timestamp_start: new Date(Date.now() - 7 * DAY).toISOString(),
        iso_timestamp_end: new Date().toISOString(),
        // lower(…) keeps the message search index out of it: a full scan of the window every time.
        sql: `select count(*) as n from edge_logs where regexp_contains(lower(event_message), 'needle-${++n}-${Math.floor(Math.random() * 1e9)}')`,
      });
      const res = await fetch(url, { headers: { 'X-API-KEY': key } });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  });
  return {
    statuses,
    stop: async () => {
      running = false;
      await Promise.all(clients);
    },
  };
}

const admin = generateKey();
const svc = await startService(admin);
const alone: number[] = [];
const flooded: number[] = [];
const pageStatuses: Record<number, number> = {};
const floodStatuses: Record<number, number> = {};
const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
let loadNo = 0;
try {
  const newKey = async (name: string) => {
    const res = await fetch(`${svc.base}/api/keys`, {
      method: 'POST',
      headers: { 'X-API-KEY': admin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `${name}-${Date.now()}`, scopes: ['query'] }),
    });
    if (res.status !== 201) throw new Error(`key: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { key: string }).key;
  };
  const page = await newKey('bench-page');
  const abuser = await newKey('bench-flood');
  // Warm-up: one load, not counted (translations, plans, the disk cache).
  await loadPage(svc.base, page, loadNo++);
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < LOADS; i++) {
      const r = await loadPage(svc.base, page, loadNo++);
      alone.push(r.ms);
      for (const s of r.statuses) pageStatuses[s] = (pageStatuses[s] ?? 0) + 1;
      console.log(`alone   ${r.ms.toFixed(0)} ms ${r.statuses.join(',')}`);
    }
    const f = flood(svc.base, abuser);
    await new Promise((r) => setTimeout(r, 2000)); // the flood fills the slots and queues
    for (let i = 0; i < LOADS; i++) {
      const r = await loadPage(svc.base, page, loadNo++);
      flooded.push(r.ms);
      for (const s of r.statuses) pageStatuses[s] = (pageStatuses[s] ?? 0) + 1;
      console.log(`flooded ${r.ms.toFixed(0)} ms ${r.statuses.join(',')}`);
    }
    await f.stop();
    for (const [s, n] of Object.entries(f.statuses)) floodStatuses[Number(s)] = (floodStatuses[Number(s)] ?? 0) + n;
  }
} finally {
  await svc.stop();
}

const slots = loadConfig({}).querySlots;
const ratio = median(flooded) / median(alone);
const block = [
  `Latest run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on \`${opts.db}\`, default limits (QUERY_SLOTS ${slots} on this machine), ${2 * LOADS} page loads per phase after one warm-up, load average ${load} at start.`,
  '',
  '| | page key alone | page key while another key floods | target |',
  '|---|---:|---:|---|',
  `| API report, 7 days, 8 queries at once: median page time | ${median(alone).toFixed(0)} ms | ${median(flooded).toFixed(0)} ms (${ratio.toFixed(2)}×) | every query 200; ≤ 2.5× alone |`,
  `| slowest page | ${Math.max(...alone).toFixed(0)} ms | ${Math.max(...flooded).toFixed(0)} ms | |`,
  `| page queries by status, both phases | ${JSON.stringify(pageStatuses)} | | all 200 |`,
  `| flooding key (${FLOOD_CLIENTS} clients of 7-day full scans): answers by status | | ${JSON.stringify(floodStatuses)} | completes (slowed, not starved) |`,
].join('\n');
console.log(block);
if (!opts['no-write']) {
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const text = readFileSync(file, 'utf8');
  const [start, stop] = ['<!-- fairness:start -->', '<!-- fairness:end -->'];
  if (text.includes(start)) writeFileSync(file, text.replace(new RegExp(`${start}[\\s\\S]*${stop}`), `${start}\n${block}\n${stop}`));
  else console.log('BENCHMARKS.md has no fairness markers: not written');
}
