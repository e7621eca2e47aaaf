/**
 * Fairness under one abusive key (docs/API.md, "Rate limits"): the p99 latency of a quiet key's
 * dashboard traffic alone, and while another key sends as much as it can: with the default
 * limits (100 requests/s, bursts of 200, 4 uncached queries at once, 1000 ms of query time per
 * second with 10 s in hand), with the same but no query-time budget (the limits before it), and
 * with no limits.
 *
 *   npx tsx bench/ratelimit.ts [--seconds 15] [--db lq_scale_1m] [--abuser-nice 19] [--no-write]
 *
 * The service is `src/main.ts` with REDIS_URL on a bench database of bench/data.ts (the 1M-row
 * one of bench/scaling.ts, `npx tsx bench/scaling.ts generate 1m`, unless --db says otherwise). Quiet key: 4 clients, each one request
 * every 100 ms (40/s), alternating a cache hit (usage.api-counts) and two uncached queries
 * (logs.all, and (d) of bench/queries.ts). Abusive key: 32 clients flat out on uncached (c) and
 * (e) (24-hour scans, ~50–80 ms each) and cache hits, from a process of its own. Phases are interleaved: quiet alone, then
 * with the abuser, twice per configuration. Prints the table and rewrites the block between the
 * `ratelimit` markers in BENCHMARKS.md.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { generateKey } from '../src/auth/keys.js';
import { freePort } from '../test/support/net.js';
import { ADMIN_URL, databaseUrl } from '../test/support/db.js';
import { BENCH_PROJECT, benchEnv } from './data.js';
import { SCENARIOS } from './queries.js';

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    db: { type: 'string', default: 'lq_scale_1m' },
    'no-write': { type: 'boolean' },
    'abuser-nice': { type: 'string', default: '0' },
    // Internal: this script run as the abusive key's own process (see abuse()).
    abuse: { type: 'string' },
  },
});
const SECONDS = Number(opts.seconds);
const ABUSER_NICE = Number(opts['abuser-nice']);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function startService(limits: Record<string, string>, admin: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      ...benchEnv(),
      ...limits,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl(ADMIN_URL, opts.db),
      REDIS_URL,
      ADMIN_API_KEY: admin,
      LOG_LEVEL: 'warn',
      LOAD_DEMO_DATA: 'false',
      QUERY_TIMEOUT_MS: '60000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (
      await fetch(`${base}/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600) throw new Error('service did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return { base, stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGTERM'))) };
}

function scenarioPath(id: string, now: number): string {
  const s = SCENARIOS.find((x) => x.id === id)!;
  const params = new URLSearchParams({ ...s.params(now), ...(s.sql ? { sql: s.sql } : {}) });
  return `/api/endpoints/query/${s.endpoint}?${params}`;
}

function p99(ms: number[]): number {
  const s = [...ms].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(0.99 * s.length))] : NaN;
}

async function phase(base: string, quietKey: string, abuseKey: string | undefined) {
  const now = Date.now();
  const quietPaths = [
    `/api/endpoints/query/usage.api-counts?interval=hourly&project=${BENCH_PROJECT}`,
    scenarioPath('logs-all', now),
    scenarioPath('d-newest', now),
  ];
  const abusePaths = [scenarioPath('c-5xx', now), scenarioPath('e-top-paths', now), quietPaths[0]];
  const end = Date.now() + SECONDS * 1000;
  const quiet: number[] = [];
  const quietStatus: Record<number, number> = {};
  const get = (path: string, key: string) =>
    fetch(base + path, { headers: { 'X-API-KEY': key } }).then(async (r) => (await r.arrayBuffer(), r.status));
  const quietClient = async (n: number) => {
    for (let i = n; Date.now() < end; i++) {
      const started = performance.now();
      const status = await get(quietPaths[i % quietPaths.length], quietKey).catch(() => 0);
      const ms = performance.now() - started;
      quiet.push(ms);
      quietStatus[status] = (quietStatus[status] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - ms)));
    }
  };
  const abuser = abuseKey ? abuse(base, abuseKey, abusePaths) : undefined;
  await Promise.all(Array.from({ length: 4 }, (_, n) => quietClient(n)));
  const abuseStatus = (await abuser) ?? {};
  return { p99: p99(quiet), n: quiet.length, quietStatus, abuseStatus };
}

/**
 * The abusive key's 32 clients, flat out for SECONDS, in a process of their own: as a separate
 * user's traffic is, so the quiet key's timings measure the service and not this script's own
 * event loop answering thousands of fast 429s a second. Resolves to the statuses it got.
 */
function abuse(base: string, key: string, paths: string[]): Promise<Record<number, number>> {
  const args = [
    '--import',
    'tsx',
    new URL(import.meta.url).pathname,
    '--seconds',
    String(SECONDS),
    '--abuse',
    JSON.stringify({ base, key, paths }),
  ];
  // --abuser-nice: the abusive client's CPU yields to everything else, standing in for a client on another machine.
  const [command, argv] = ABUSER_NICE > 0 ? ['nice', ['-n', String(ABUSER_NICE), process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Record<number, number>) : reject(new Error(`abuser exited ${code}`)),
    ),
  );
}

if (opts.abuse) {
  const { base, key, paths } = JSON.parse(opts.abuse) as { base: string; key: string; paths: string[] };
  const end = Date.now() + SECONDS * 1000;
  const statuses: Record<number, number> = {};
  await Promise.all(
    Array.from({ length: 32 }, async (_, n) => {
      for (let i = n; Date.now() < end; i++) {
        const status = await fetch(base + paths[i % paths.length], { headers: { 'X-API-KEY': key } }).then(
          async (r) => (await r.arrayBuffer(), r.status),
          () => 0,
        );
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  process.stdout.write(JSON.stringify(statuses));
  process.exit(0);
}

const RATE = { RATE_LIMIT_PER_SECOND: '100', RATE_LIMIT_BURST: '200', MAX_CONCURRENT_QUERIES: '4' };
const configs = [
  {
    name: 'default limits (100/s, burst 200, 4 queries, 1000 ms/s of query time, 10 s burst)',
    env: { ...RATE, QUERY_TIME_PER_SECOND_MS: '1000', QUERY_TIME_BURST_MS: '10000' },
  },
  { name: 'no query-time budget (100/s, burst 200, 4 queries)', env: { ...RATE, QUERY_TIME_PER_SECOND_MS: '0' } },
  {
    name: 'no limits',
    env: { RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_BURST: '200', MAX_CONCURRENT_QUERIES: '0', QUERY_TIME_PER_SECOND_MS: '0' },
  },
];
const lines: string[] = [];
const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
for (const config of configs) {
  const admin = generateKey();
  const svc = await startService(config.env, admin);
  try {
    const mk = async (name: string) =>
      (
        (await (
          await fetch(`${svc.base}/api/keys`, {
            method: 'POST',
            headers: { 'X-API-KEY': admin, 'Content-Type': 'application/json' },
            body: JSON.stringify({ name, scopes: ['query'] }),
          })
        ).json()) as { key: string }
      ).key;
    const quietKey = await mk('bench-quiet');
    const abuseKey = await mk('bench-abuse');
    await phase(svc.base, quietKey, undefined); // warm-up: caches, translations, connections
    const alone: number[] = [];
    const abused: number[] = [];
    let last: Awaited<ReturnType<typeof phase>> | undefined;
    for (let round = 0; round < 2; round++) {
      alone.push((await phase(svc.base, quietKey, undefined)).p99);
      last = await phase(svc.base, quietKey, abuseKey);
      abused.push(last.p99);
    }
    const a = Math.max(...alone);
    const b = Math.max(...abused);
    const line = `| ${config.name} | ${a.toFixed(0)} ms | ${b.toFixed(0)} ms | ${(b / a).toFixed(2)} | quiet ${JSON.stringify(last!.quietStatus)}, abusive ${JSON.stringify(last!.abuseStatus)} |`;
    console.log(line);
    lines.push(line);
  } finally {
    await svc.stop();
  }
}
const block = [
  `Latest run: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on \`${opts.db}\`, ${SECONDS} s phases, load average ${load} at start (shared machine)${ABUSER_NICE > 0 ? `; the abusive client's process at nice ${ABUSER_NICE}` : ''}.`,
  '',
  '| configuration | quiet key p99 alone | quiet key p99 with the abusive key | ratio (target ≤ 2) | statuses in the last abused phase |',
  '|---|---:|---:|---:|---|',
  ...lines,
].join('\n');
console.log(block);
if (!opts['no-write']) {
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const text = readFileSync(file, 'utf8');
  const marker = ABUSER_NICE > 0 ? 'ratelimit-nice' : 'ratelimit';
  const start = `<!-- ${marker}:start -->`;
  const stop = `<!-- ${marker}:end -->`;
  if (text.includes(start)) writeFileSync(file, text.replace(new RegExp(`${start}[\\s\\S]*${stop}`), `${start}\n${block}\n${stop}`));
  else console.log(`BENCHMARKS.md has no ${marker} markers: not written`);
}
