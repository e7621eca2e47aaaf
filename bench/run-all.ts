/**
 * `npm run bench`: every scenario, each figure next to its floor measured side by side in the
 * same run (interleaved rounds, medians after warm-up); prints a table and rewrites the generated
 * part of BENCHMARKS.md.
 *
 *   npm run bench                      # 1M rows (generated once into lq_bench_1m, then reused)
 *   npm run bench -- --quick           # smoke run: one short round of everything
 *   npm run bench -- --size 5m         # the same at 5M rows (lq_bench_5m, 40 days)
 *   npm run bench -- --size 10m        # the same at 10M rows over 7 days (lq_bench_10m: ~18 min, ~21 GB)
 *   npm run bench -- --scaling         # also the window queries on lq_bench_5m (generates it once: ~10 min)
 *   npm run bench -- --regen           # regenerate the data
 *   npm run bench -- --no-write        # print only
 *   npm run bench -- --render          # rewrite BENCHMARKS.md from bench/results/<size>.json
 *   npm run bench -- --only cache,queries,translate,ingest
 *
 * Processes: the service (`tsx src/main.ts`, Redis cache) and the cache floor (bench/floor-server.ts)
 * each run in their own process; load (autocannon) and the SQL floors run from this one.
 */
import { execFileSync } from 'node:child_process';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { createClient } from 'redis';
import { initTranslator, translateQuery, translateWithoutValidation, validatePostgres } from '../src/sql/index.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../seeds/queries.js';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { PLANNER_OPTIONS } from '../src/db/readOnlySession.js';
import { createLogger } from '../src/logger.js';
import { testConfig } from '../test/support/db.js';
import { BENCH_PROJECT, benchEnv, ensureBenchData, SIZES, type BenchDatabase, type Size } from './data.js';
import { runClients, type ClientsFigures } from './load.js';
import { SCENARIOS, translatedScenario, USAGE_UNCACHED, type Scenario } from './queries.js';

const ROOT = new URL('..', import.meta.url).pathname;
const { values: opts } = parseArgs({
  options: {
    size: { type: 'string', default: '1m' },
    quick: { type: 'boolean', default: false },
    scaling: { type: 'boolean', default: false },
    regen: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    only: { type: 'string', default: 'cache,queries,translate,ingest,hot,studio' },
    /** Rewrite BENCHMARKS.md from bench/results/<size>.json without running anything. */
    render: { type: 'boolean', default: false },
  },
});
if (!(opts.size in SIZES)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const SIZE = opts.size as Size;
const QUICK = opts.quick;
const ONLY = new Set(opts.only.split(','));
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Cache-hit load: rounds × (service, floor) of this many seconds each. */
const LOAD = QUICK ? { rounds: 1, seconds: 3, connections: 50 } : { rounds: 3, seconds: 10, connections: 50 };
/** Query timing: warm-up runs, then interleaved rounds (fewer for multi-second queries). */
const QUERY = QUICK ? { warmup: 1, rounds: 1, slowRounds: 1, fastRounds: 1 } : { warmup: 3, rounds: 7, slowRounds: 3, fastRounds: 15 };

const started = performance.now();
const log = (line: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// ---------------------------------------------------------------------------------------------
// processes

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}

interface Proc {
  child: ChildProcess;
  port: number;
  stop(): Promise<void>;
}

async function startProcess(script: string, env: Record<string, string>, ready: (port: number) => Promise<boolean>): Promise<Proc> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output = (output + d).slice(-4000)));
  child.stderr.on('data', (d) => (output = (output + d).slice(-4000)));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited: ${output}`);
    if (await ready(port).catch(() => false)) break;
    if (Date.now() > deadline) throw new Error(`${script} did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    child,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => (clearTimeout(timer), resolve()));
        child.kill('SIGTERM');
      }),
  };
}

async function startService(db: BenchDatabase, adminKey: string): Promise<Proc> {
  return startProcess(
    'src/main.ts',
    {
      ...benchEnv(),
      DATABASE_URL: db.url,
      REDIS_URL,
      HOST: '127.0.0.1',
      ADMIN_API_KEY: adminKey,
      LOG_LEVEL: 'warn',
      LOAD_DEMO_DATA: 'false',
      // the 7-day usage query takes seconds on a shared 2-core machine; the default 15 s limit is for production
      QUERY_TIMEOUT_MS: '120000',
    },
    async (port) => (await fetch(`http://127.0.0.1:${port}/ready`)).ok,
  );
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

class Service {
  constructor(
    readonly port: number,
    readonly key: string,
  ) {}
  url(path: string, params: Record<string, string> = {}): string {
    const qs = new URLSearchParams(params).toString();
    return `http://127.0.0.1:${this.port}${path}${qs ? '?' + qs : ''}`;
  }
  async request(
    method: string,
    path: string,
    body?: unknown,
    params?: Record<string, string>,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a response body, read field by field
  ): Promise<{ status: number; json: any; headers: Headers; text: string }> {
    const res = await fetch(this.url(path, params), {
      method,
      headers: { 'X-API-KEY': this.key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, headers: res.headers, text };
  }
}

/** The uncached copy of usage.api-counts: same SQL and parameters, cache disabled. */
async function ensureUncachedUsage(svc: Service): Promise<void> {
  const seeded = await svc.request('GET', '/api/endpoints/usage.api-counts');
  if (seeded.status !== 200) throw new Error(`GET usage.api-counts: ${seeded.status} ${seeded.text}`);
  const def = {
    name: USAGE_UNCACHED,
    query: seeded.json.query,
    parameters: seeded.json.parameters,
    max_rows: seeded.json.max_rows,
    cache_duration_seconds: 0,
    cache_warming_seconds: null,
    sandboxable: true,
    redact_pii: false,
  };
  const existing = await svc.request('GET', `/api/endpoints/${USAGE_UNCACHED}`);
  const res =
    existing.status === 200
      ? await svc.request('PUT', `/api/endpoints/${USAGE_UNCACHED}`, def)
      : await svc.request('POST', '/api/endpoints', def);
  if (res.status >= 300) throw new Error(`creating ${USAGE_UNCACHED}: ${res.status} ${res.text}`);
}

// ---------------------------------------------------------------------------------------------
// 1. cache hit

interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  bytes: number;
}

function cannon(url: string, headers: Record<string, string>, seconds: number, overallRate?: number): Promise<LoadFigures> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: LOAD.connections, duration: seconds, headers, ...(overallRate ? { overallRate } : {}) }, (err, r) => {
      if (err) return reject(err);
      resolve({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        errors: r.errors + r.timeouts + r.non2xx,
        bytes: r.throughput.average / Math.max(1, r.requests.average),
      });
    });
  });
}

async function cacheScenario(svc: Service) {
  const params = { interval: 'daily', project: BENCH_PROJECT };
  const first = await svc.request('GET', '/api/endpoints/query/usage.api-counts', undefined, params);
  if (first.status !== 200) throw new Error(`usage.api-counts: ${first.status} ${first.text}`);
  const second = await svc.request('GET', '/api/endpoints/query/usage.api-counts', undefined, params);
  if (second.headers.get('x-cache') !== 'HIT') throw new Error(`expected a cache HIT, got ${second.headers.get('x-cache')}`);
  // The Redis key holding exactly these bytes.
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  const endpoint = await svc.request('GET', '/api/endpoints/usage.api-counts');
  let key: string | undefined;
  for await (const keys of redis.scanIterator({ MATCH: `lq:ep:${endpoint.json.id}:*`, COUNT: 1000 })) {
    for (const k of ([] as string[]).concat(keys)) if ((await redis.get(k)) === second.text) key = k;
  }
  await redis.quit();
  if (!key) throw new Error('the cached body was not found in Redis');
  const floor = await startProcess(
    'bench/floor-server.ts',
    { REDIS_URL, KEY: key },
    async (port) => (await fetch(`http://127.0.0.1:${port}/floor`)).ok,
  );
  try {
    const floorBody = await (await fetch(`http://127.0.0.1:${floor.port}/floor`)).text();
    if (floorBody !== second.text) throw new Error('the floor does not send the same bytes');
    const serviceUrl = svc.url('/api/endpoints/query/usage.api-counts', params);
    const floorUrl = `http://127.0.0.1:${floor.port}/floor`;
    await cannon(serviceUrl, { 'X-API-KEY': svc.key }, 2); // warm-up
    await cannon(floorUrl, {}, 2);
    const service: LoadFigures[] = [];
    const floors: LoadFigures[] = [];
    for (let round = 0; round < LOAD.rounds; round++) {
      // alternate which goes first
      const pair = round % 2 ? ['floor', 'service'] : ['service', 'floor'];
      for (const which of pair) {
        if (which === 'service') service.push(await cannon(serviceUrl, { 'X-API-KEY': svc.key }, LOAD.seconds));
        else floors.push(await cannon(floorUrl, {}, LOAD.seconds));
      }
      log(
        `  cache round ${round + 1}: service ${service.at(-1)!.rps.toFixed(0)} req/s p99 ${service.at(-1)!.p99} ms, floor ${floors.at(-1)!.rps.toFixed(0)} req/s p99 ${floors.at(-1)!.p99} ms`,
      );
    }
    // Latency at a fixed offered load: saturating 50 connections on 2 cores queues requests
    // (p99 ≈ connections / throughput), so p99 is also measured at half the floor's throughput.
    const rate = Math.round(median(floors.map((x) => x.rps)) / 2);
    const serviceAtRate: LoadFigures[] = [];
    const floorAtRate: LoadFigures[] = [];
    for (let round = 0; round < LOAD.rounds; round++) {
      serviceAtRate.push(await cannon(serviceUrl, { 'X-API-KEY': svc.key }, LOAD.seconds, rate));
      floorAtRate.push(await cannon(floorUrl, {}, LOAD.seconds, rate));
      log(
        `  cache at ${rate} req/s, round ${round + 1}: service p50 ${serviceAtRate.at(-1)!.p50} ms p99 ${serviceAtRate.at(-1)!.p99} ms, floor p50 ${floorAtRate.at(-1)!.p50} ms p99 ${floorAtRate.at(-1)!.p99} ms`,
      );
    }
    // The service's own count of cache events during the load: all hits, or did its Redis guard
    // (50 ms budget, 1 s breaker) trip and send requests to the database?
    const metrics = await (await fetch(`http://127.0.0.1:${svc.port}/metrics`)).text();
    const events = Object.fromEntries(
      [...metrics.matchAll(/^logquery_cache_events_total\{event="(\w+)"\} (\d+)/gm)].map((m) => [m[1], Number(m[2])]),
    );
    log(`  service cache events: ${JSON.stringify(events)}`);
    const pick = (xs: LoadFigures[]) => ({
      rps: median(xs.map((x) => x.rps)),
      p50: median(xs.map((x) => x.p50)),
      p99: median(xs.map((x) => x.p99)),
      errors: xs.reduce((n, x) => n + x.errors, 0),
      bytes: Buffer.byteLength(second.text),
    });
    return {
      service: pick(service),
      floor: pick(floors),
      rate,
      serviceAtRate: pick(serviceAtRate),
      floorAtRate: pick(floorAtRate),
      rounds: LOAD.rounds,
      seconds: LOAD.seconds,
      connections: LOAD.connections,
      events,
    };
  } finally {
    await floor.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. uncached queries

/** Floor connection: the session settings the service's transaction sets (UTC, no JIT). */
async function floorClient(url: string): Promise<pg.Client> {
  const types = {
    getTypeParser: (oid: number, format?: 'text' | 'binary') =>
      [20, 1700, 1114, 1184].includes(oid) ? (v: string) => v : pg.types.getTypeParser(oid, format ?? 'text'),
  };
  const client = new pg.Client({ connectionString: url, types, options: `${PLANNER_OPTIONS} -c TimeZone=UTC` });
  await client.connect();
  return client;
}

/** Floor values in the service's encoding (docs/API.md, "Row encoding"): timestamptz → µs, timestamp → ISO without zone, int8/numeric → number. */
function encodeFloorValue(value: unknown, oid: number): unknown {
  if (value === null) return null;
  if (oid === 1184) {
    const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?\+00$/.exec(value as string);
    if (!m) throw new Error(`unexpected timestamptz ${JSON.stringify(value)}`);
    return Date.parse(`${m[1]}T${m[2]}Z`) * 1000 + Math.round(Number(m[3] ?? 0) * 1e6);
  }
  if (oid === 1114) {
    const [date, time] = (value as string).split(' ');
    const [hms, frac] = time.split('.');
    const f = frac ? frac.replace(/0+$/, '') : '';
    return `${date}T${hms}${f ? '.' + f : ''}`;
  }
  if (oid === 20 || oid === 1700) return Number(value);
  return value;
}

interface QueryFigures {
  id: string;
  title: string;
  serviceMs: number;
  floorMs: number;
  ratio: number;
  rows: number;
  compared: string;
  runs: number;
  /** The same response body served by bench/floor-server.ts (one Redis GET) and read by the same client: what HTTP alone costs for it. */
  httpFloorMs?: number;
}

/** bench/floor-server.ts with a Redis client to store each scenario's body in, for the HTTP floor of the uncached queries. */
interface HttpFloor {
  port: number;
  redis: ReturnType<typeof createClient>;
}

async function runScenarios(svc: Service, floor: pg.Client, scenarios: Scenario[], httpFloor?: HttpFloor): Promise<QueryFigures[]> {
  const out: QueryFigures[] = [];
  for (const s of scenarios) {
    const now = Date.now();
    const params = { ...s.params(now), ...(s.sql ? { sql: s.sql } : {}) };
    const path = `/api/endpoints/query/${s.endpoint}`;
    const f = s.floor(now);
    const callService = async () => {
      const t0 = performance.now();
      const res = await svc.request('GET', path, undefined, params);
      const ms = performance.now() - t0;
      if (res.status !== 200) throw new Error(`${s.id}: ${res.status} ${res.text.slice(0, 500)}`);
      if (res.headers.get('x-cache') !== 'BYPASS') throw new Error(`${s.id}: expected X-Cache BYPASS, got ${res.headers.get('x-cache')}`);
      return { ms, rows: res.json.result as Record<string, unknown>[], text: res.text };
    };
    const floorKey = `lqbench:http-floor:${s.id}`;
    const callHttpFloor = async () => {
      const t0 = performance.now();
      const res = await fetch(`http://127.0.0.1:${httpFloor!.port}/floor?key=${encodeURIComponent(floorKey)}`);
      JSON.parse(await res.text()); // the client work Service.request does
      return performance.now() - t0;
    };
    const callFloor = async () => {
      const t0 = performance.now();
      const r = await floor.query({ text: f.text, values: f.values, rowMode: 'array' });
      const ms = performance.now() - t0;
      return { ms, rows: r.rows.map((row: unknown[]) => row.map((v, i) => encodeFloorValue(v, r.fields[i].dataTypeID))) };
    };
    // Warm-up, and the honesty check: the floor answers the same rows.
    let first = await callService();
    const floorFirst = await callFloor();
    const from = s.compareFrom ?? 0;
    const serviceRows = first.rows.map((r) => Object.values(r)).slice(from);
    const floorRows = floorFirst.rows.slice(from);
    if (!isDeepStrictEqual(serviceRows, floorRows)) {
      const at = serviceRows.findIndex((r, i) => !isDeepStrictEqual(r, floorRows[i]));
      throw new Error(
        `${s.id}: the floor's rows differ from the service's (${serviceRows.length} vs ${floorRows.length} rows; first difference at ${at}: ${JSON.stringify(serviceRows[at])?.slice(0, 300)} vs ${JSON.stringify(floorRows[at])?.slice(0, 300)})`,
      );
    }
    if (serviceRows.length === 0) throw new Error(`${s.id}: no rows; the comparison would prove nothing`);
    // Each pooled connection plans its first query with cold catalog caches: a few warm-up runs.
    for (let i = 1; i < QUERY.warmup; i++) first = await callService();
    const rounds = first.ms > 2000 ? QUERY.slowRounds : first.ms < 100 ? QUERY.fastRounds : QUERY.rounds;
    const serviceMs: number[] = [];
    const floorMs: number[] = [];
    const httpFloorMs: number[] = [];
    if (httpFloor) await httpFloor.redis.set(floorKey, first.text, { EX: 600 });
    for (let round = 0; round < rounds; round++) {
      if (round % 2) {
        floorMs.push((await callFloor()).ms);
        serviceMs.push((first = await callService()).ms);
      } else {
        serviceMs.push((first = await callService()).ms);
        floorMs.push((await callFloor()).ms);
      }
      if (httpFloor) httpFloorMs.push(await callHttpFloor());
    }
    if (httpFloor) await httpFloor.redis.del(floorKey);
    const fig: QueryFigures = {
      id: s.id,
      title: s.title,
      serviceMs: median(serviceMs),
      floorMs: median(floorMs),
      ratio: median(serviceMs) / median(floorMs),
      rows: first.rows.length,
      compared: from ? `same rows from bucket ${from + 1} (the first, partial bucket moves with now())` : 'same rows',
      runs: rounds,
      ...(httpFloorMs.length ? { httpFloorMs: median(httpFloorMs) } : {}),
    };
    const http = fig.httpFloorMs === undefined ? '' : `  HTTP floor ${fig.httpFloorMs.toFixed(1)} ms`;
    log(
      `  ${s.id.padEnd(14)} service ${fig.serviceMs.toFixed(1).padStart(8)} ms  floor ${fig.floorMs.toFixed(1).padStart(8)} ms  ratio ${fig.ratio.toFixed(2)}${http}  (${fig.rows} rows, median of ${rounds})`,
    );
    out.push(fig);
  }
  return out;
}

/** The same requests to a service on each database, alternating, so both see the same machine. */
async function scalingScenario(
  smallDb: BenchDatabase,
  largeDb: BenchDatabase,
  scenarios: Scenario[],
): Promise<{ small: QueryFigures[]; large: QueryFigures[] }> {
  const key = randomBytes(24).toString('hex');
  const procs = [await startService(smallDb, key), await startService(largeDb, key)];
  const services = procs.map((p) => new Service(p.port, key));
  const out = { small: [] as QueryFigures[], large: [] as QueryFigures[] };
  try {
    for (const svc of services) await ensureUncachedUsage(svc);
    for (const s of scenarios) {
      const params = { ...s.params(Date.now()), ...(s.sql ? { sql: s.sql } : {}) };
      const call = async (svc: Service) => {
        const t0 = performance.now();
        const res = await svc.request('GET', `/api/endpoints/query/${s.endpoint}`, undefined, params);
        if (res.status !== 200) throw new Error(`${s.id}: ${res.status} ${res.text.slice(0, 300)}`);
        return { ms: performance.now() - t0, rows: (res.json.result as unknown[]).length };
      };
      let first = 0;
      for (let i = 0; i < QUERY.warmup; i++) for (const svc of services) first = Math.max(first, (await call(svc)).ms);
      const rounds = first > 2000 ? QUERY.slowRounds : first < 100 ? QUERY.fastRounds : QUERY.rounds;
      const times: number[][] = [[], []];
      const rows = [0, 0];
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 ? [1, 0] : [0, 1];
        for (const i of order) {
          const r = await call(services[i]);
          times[i].push(r.ms);
          rows[i] = r.rows;
        }
      }
      const fig = (i: number): QueryFigures => ({
        id: s.id,
        title: s.title,
        serviceMs: median(times[i]),
        floorMs: NaN,
        ratio: NaN,
        rows: rows[i],
        compared: '',
        runs: rounds,
      });
      out.small.push(fig(0));
      out.large.push(fig(1));
      log(
        `  ${s.id.padEnd(14)} ${smallDb.size} ${fig(0).serviceMs.toFixed(1).padStart(8)} ms  ${largeDb.size} ${fig(1).serviceMs.toFixed(1).padStart(8)} ms  ratio ${(fig(1).serviceMs / fig(0).serviceMs).toFixed(2)}  (median of ${rounds})`,
      );
    }
    return out;
  } finally {
    for (const p of procs) await p.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 2b. 20 clients at once

interface ConcurrencyFigures {
  clients: number;
  seconds: number;
  /** The service's pool (DB_POOL_SIZE), and so the connections `pg` gets; absent in results from before. */
  connections?: number;
  /** The service's database slots (QUERY_SLOTS: its default on this machine). */
  slots?: number;
  service: ClientsFigures;
  pg: ClientsFigures;
}

/**
 * 20 clients at once, each running the uncached dashboard queries (every scenario but the 7-day
 * usage scan) in turn: through the service over HTTP, then the same translated SQL with the same
 * parameters sent with `pg` on as many connections as the service's pool (what the service's
 * queries cost the database without the service around them; the fair scheduler runs at most
 * QUERY_SLOTS of them at once, src/rateLimit/scheduler.ts).
 */
async function concurrencyScenario(svc: Service, db: BenchDatabase, clients = 20, seconds = QUICK ? 3 : 15): Promise<ConcurrencyFigures> {
  const dashboard = SCENARIOS.filter((s) => s.id !== 'usage-daily');
  await initTranslator();
  const ctx = await createContext(testConfig(db.url, benchEnv()), createLogger('silent'));
  const sources = ctx.sources.lookup;
  const now = Date.now();
  const sqlOf = dashboard.map((s) => translatedScenario(s, sources, now));
  await ctx.close();
  const service = await runClients(clients, seconds, async (i) => {
    const s = dashboard[i % dashboard.length];
    const res = await svc.request('GET', `/api/endpoints/query/${s.endpoint}`, undefined, {
      ...s.params(now),
      ...(s.sql ? { sql: s.sql } : {}),
    });
    return res.status === 200 && res.headers.get('x-cache') === 'BYPASS';
  });
  const connections = Number(benchEnv().DB_POOL_SIZE);
  const slots = loadConfig({ DB_POOL_SIZE: String(connections) }).querySlots;
  const pool = new pg.Pool({ connectionString: db.url, max: connections, options: `${PLANNER_OPTIONS} -c TimeZone=UTC` });
  try {
    const direct = await runClients(clients, seconds, async (i) => {
      const q = sqlOf[i % sqlOf.length];
      await pool.query(q.text, q.values);
      return true;
    });
    return { clients, seconds, connections, slots, service, pg: direct };
  } finally {
    await pool.end();
  }
}

// ---------------------------------------------------------------------------------------------
// 4. translation

interface TranslationFigures {
  id: string;
  translate: number;
  full: number;
  validation: number;
  exact: boolean;
}

async function translationScenario(db: BenchDatabase): Promise<TranslationFigures[]> {
  await initTranslator();
  const ctx = await createContext(testConfig(db.url, benchEnv()), createLogger('silent'));
  const sources = ctx.sources.lookup;
  await ctx.close();
  const WARMUP = QUICK ? 200 : 2000;
  const RUNS = QUICK ? 500 : 3000;
  /** Best of 3 round medians; each phase stops at its count or its time budget (sandboxed translations take milliseconds). */
  const micros = (run: () => void) => {
    const warmUntil = performance.now() + (QUICK ? 200 : 500);
    for (let i = 0; i < WARMUP && performance.now() < warmUntil; i++) run();
    let best = Infinity;
    for (let round = 0; round < 3; round++) {
      const times: number[] = [];
      const until = performance.now() + (QUICK ? 300 : 700);
      while (times.length < RUNS && (times.length < 50 || performance.now() < until)) {
        const t0 = performance.now();
        run();
        times.push(performance.now() - t0);
      }
      best = Math.min(best, median(times) * 1000);
    }
    return best;
  };
  const items: Array<{ id: string; query: string; sql?: string }> = [
    { id: 'usage.api-counts', query: USAGE_API_COUNTS_SQL },
    { id: 'logs.all', query: LOGS_ALL_SQL },
    ...SCENARIOS.filter((s) => s.sql).map((s) => ({ id: `${s.id} (sandboxed over logs.all)`, query: LOGS_ALL_SQL, sql: s.sql })),
  ];
  const out: TranslationFigures[] = [];
  for (const item of items) {
    const full = micros(() => translateQuery({ query: item.query, sandboxSql: item.sql, sources, maxRows: 1000 }));
    const printed = translateQuery({ query: item.query, sandboxSql: item.sql, sources, maxRows: 1000 }).sql;
    const validation = micros(() => validatePostgres(printed));
    const exact = true;
    // translateQuery minus the validation (src/sql/index.ts translateWithoutValidation).
    const translate = micros(() => translateWithoutValidation({ query: item.query, sandboxSql: item.sql, sources, maxRows: 1000 }));
    log(
      `  ${item.id.padEnd(40)} parse+translate ${translate.toFixed(0).padStart(6)} µs  with validation ${full.toFixed(0).padStart(6)} µs`,
    );
    out.push({ id: item.id, translate, full, validation, exact });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 5. ingestion (bench/ingest.ts in its own process)

interface IngestFigures {
  http: number;
  direct: number;
  copy: number;
  ratio: number;
  args: string;
}

async function ingestScenario(): Promise<IngestFigures> {
  const args = QUICK ? ['--batches', '6', '--rounds', '1'] : ['--rounds', '3'];
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/ingest.ts', '--no-write', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const num = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`bench/ingest.ts (exit ${code}) printed no ${re}: ${out.slice(-1500)}`);
    return Number(m[1]);
  };
  const f = {
    http: num(/HTTP POST \/api\/logs\s+(\d+) events\/s/),
    direct: num(/in-process normalise\+write\s+(\d+) events\/s/),
    copy: num(/raw COPY \(floor\)\s+(\d+) events\/s/),
    ratio: 0,
    args: args.join(' '),
  };
  f.ratio = f.http / f.copy;
  log(`  ingest: HTTP ${f.http} events/s, COPY ${f.copy} events/s, ratio ${f.ratio.toFixed(2)}`);
  return f;
}

// ---------------------------------------------------------------------------------------------
// report

interface Results {
  date: string;
  quick: boolean;
  machine: { cores: number; memoryGb: number; cpu: string; node: string; postgres: string; load: string };
  data: { size: Size; rows: number; edgeBytesPerRow: number; seconds: number; reused: boolean };
  cache?: Awaited<ReturnType<typeof cacheScenario>>;
  queries?: QueryFigures[];
  concurrency?: ConcurrencyFigures;
  scaling?: { small: QueryFigures[]; large: QueryFigures[]; largeRows: number; how: string };
  translation?: TranslationFigures[];
  ingest?: IngestFigures;
  totalSeconds: number;
}

const ok = (met: boolean) => (met ? 'met' : '**missed**');
const f1 = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function renderMarkdown(r: Results): string {
  const L: string[] = [];
  L.push(
    `Latest run: ${r.date}${r.quick ? ' (**--quick**: smoke figures, not for comparison)' : ''}; ${r.machine.cores} cores (${r.machine.cpu}), ${r.machine.memoryGb} GB memory, Node ${r.machine.node}, ${r.machine.postgres}, Redis on loopback; load average at start ${r.machine.load} (other work shares the machine, which is why every ratio is measured side by side).`,
  );
  L.push(
    `Data: \`lq_bench_${r.data.size}\`, ${r.data.rows.toLocaleString('en')} rows (85% edge events of ~${(r.data.edgeBytesPerRow / 1000).toFixed(1)} KB, ${SIZES[r.data.size].days} days, daily partitions); ${r.data.reused ? `reused (topped up in ${r.data.seconds.toFixed(0)} s)` : `generated in ${r.data.seconds.toFixed(0)} s`}. Total bench time: ${(r.totalSeconds / 60).toFixed(1)} min.`,
  );
  L.push('');
  L.push('| scenario | service | floor | ratio | target | |');
  L.push('|---|---:|---:|---:|---|---|');
  if (r.cache) {
    const c = r.cache;
    const ratio = c.service.rps / c.floor.rps;
    L.push(
      `| 1. cache hit \`usage.api-counts\` (${c.connections} connections, ${c.seconds} s × ${c.rounds}) req/s | ${c.service.rps.toFixed(0)} | ${c.floor.rps.toFixed(0)} | ${ratio.toFixed(2)} | ≥ 0.8 | ${ok(ratio >= 0.8)} |`,
    );
    L.push(
      `| 1. cache hit p99 latency, saturated (${c.connections} connections flat out) | ${c.service.p99} ms | ${c.floor.p99} ms | ${(c.service.p99 / c.floor.p99).toFixed(2)} | < 10 ms | ${ok(c.service.p99 < 10)} |`,
    );
    L.push(
      `| 1. cache hit p99 latency at ${c.rate} req/s (half the floor's throughput, ${c.connections} connections) | ${c.serviceAtRate.p99} ms | ${c.floorAtRate.p99} ms | ${(c.serviceAtRate.p99 / Math.max(1, c.floorAtRate.p99)).toFixed(2)} | < 10 ms | ${ok(c.serviceAtRate.p99 < 10)} |`,
    );
  }
  for (const q of r.queries ?? []) {
    L.push(`| 2. ${q.title} | ${f1(q.serviceMs)} ms | ${f1(q.floorMs)} ms | ${q.ratio.toFixed(2)} | ≤ 1.2 | ${ok(q.ratio <= 1.2)} |`);
  }
  if (r.scaling) {
    for (const big of r.scaling.large) {
      const small = r.scaling.small.find((q) => q.id === big.id);
      if (!small) continue;
      const ratio = big.serviceMs / small.serviceMs;
      L.push(
        `| 3. scaling ${big.title}: ${(r.scaling.largeRows / 1e6).toFixed(0)}M rows (40 days) vs 1M (8 days) | ${f1(big.serviceMs)} ms | ${f1(small.serviceMs)} ms | ${ratio.toFixed(2)} | ≤ 1.3 | ${ok(ratio <= 1.3)} |`,
      );
    }
  }
  for (const t of r.translation ?? []) {
    L.push(`| 4. translate ${t.id} | ${t.exact ? '' : '≈ '}${t.translate.toFixed(0)} µs | | | < 100 µs | ${ok(t.translate < 100)} |`);
  }
  if (r.ingest) {
    L.push(
      `| 5. ingest \`POST /api/logs\` events/s | ${r.ingest.http} | ${r.ingest.copy} (COPY) | ${r.ingest.ratio.toFixed(2)} | ≥ 0.5 | ${ok(r.ingest.ratio >= 0.5)} |`,
    );
  }
  L.push('');
  if (r.cache) {
    const c = r.cache;
    L.push(
      `Cache hit detail: service p50 ${c.service.p50} ms / p99 ${c.service.p99} ms, floor p50 ${c.floor.p50} ms / p99 ${c.floor.p99} ms, body ${c.service.bytes} bytes, errors/non-2xx ${c.service.errors} / ${c.floor.errors}; service cache events during the run ${JSON.stringify(c.events)}; medians of ${c.rounds} interleaved rounds after a 2 s warm-up of each.`,
    );
  }
  if (r.queries) {
    L.push(
      `Uncached queries: wall time of one request through HTTP (X-Cache: BYPASS) vs the floor's \`pg\` query time, medians of ${QUERY.rounds} interleaved rounds (${QUERY.fastRounds} for queries under 100 ms, ${QUERY.slowRounds} over 2 s) after ${QUERY.warmup} warm-up runs; every floor returned the same rows as the service (checked each run).`,
    );
    if (r.concurrency) {
      const c = r.concurrency;
      L.push('');
      L.push(
        `${c.clients} clients at once for ${c.seconds} s, each running the uncached dashboard queries (every scenario but usage daily) in turn: through the service over HTTP ${c.service.qps.toFixed(0)} queries/s, p99 ${f1(c.service.p99)} ms (${c.service.errors} not 200 BYPASS); the same translated SQL sent with \`pg\` on ${c.connections ?? c.clients} connections${c.connections ? ` (the service's pool; its scheduler runs ${c.slots} at once)` : ''} ${c.pg.qps.toFixed(0)} queries/s, p99 ${f1(c.pg.p99)} ms; service / pg throughput ${(c.service.qps / c.pg.qps).toFixed(2)}.`,
      );
    }
    const withHttp = r.queries.filter((q) => q.httpFloorMs !== undefined);
    if (withHttp.length) {
      L.push('');
      L.push(
        'HTTP floor: the same response body served by bench/floor-server.ts (Express, one Redis GET) and read by the same client (fetch + JSON.parse), i.e. what carrying that answer over HTTP costs on this machine; the service cannot go below `pg` floor + HTTP floor: ' +
          withHttp
            .map(
              (q) =>
                `${q.id} ${f1(q.httpFloorMs!)} ms (service ${f1(q.serviceMs)} vs ${f1(q.floorMs + q.httpFloorMs!)} ms = ${(q.serviceMs / (q.floorMs + q.httpFloorMs!)).toFixed(2)}×)`,
            )
            .join(', ') +
          '.',
      );
    }
  }
  if (r.scaling)
    L.push(
      `Scaling: the service's time for the window queries on lq_bench_1m and lq_bench_5m (same events per day, 5× the history); ${r.scaling.how}.`,
    );
  if (r.translation) {
    L.push(
      'Translation: median µs per call after warm-up, best of 3 rounds; parse + resolve + print (a sandboxed query: the nine CTEs of the endpoint plus the query of the caller). Full `translateQuery` with the libpg-query validation (wall 2): ' +
        r.translation.map((t) => `${t.id.split(' ')[0]} ${t.full.toFixed(0)} µs`).join(', ') +
        '. Translations are cached per endpoint version and per distinct `sql`, so this is paid once, not per request.',
    );
  }
  if (r.ingest) {
    L.push(
      `Ingestion: \`bench/ingest.ts --no-write ${r.ingest.args}\` (1,000-event batches of edge events, 3 clients, best of rounds); in-process normalise + write: ${r.ingest.direct} events/s.`,
    );
  }
  return L.join('\n').replace(/\n(?=Cache hit detail|Uncached queries|Scaling:|Translation:|Ingestion:)/g, '\n\n');
}

const START = '<!-- run-all:start -->';
const END = '<!-- run-all:end -->';

function writeBenchmarks(r: Results): void {
  const file = `${ROOT}BENCHMARKS.md`;
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const block = `${START}\n${renderMarkdown(r)}\n${END}`;
  let next: string;
  if (text.includes(START) && text.includes(END))
    next = text.slice(0, text.indexOf(START)) + block + text.slice(text.indexOf(END) + END.length);
  else next = text.replace(/^# Benchmarks\n/, `# Benchmarks\n\n${block}\n`);
  writeFileSync(file, next);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (opts.render) {
    const saved = loadResults(SIZE);
    if (!saved) throw new Error(`no bench/results/${SIZE}.json yet`);
    writeBenchmarks(saved);
    console.log(renderMarkdown(saved));
    return;
  }
  const pgVersion = async (url: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    const v = (await c.query('SHOW server_version')).rows[0].server_version;
    await c.end();
    return `Postgres ${String(v).split(' ')[0]}`;
  };
  const results: Partial<Results> = {
    date: new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
    quick: QUICK,
    machine: {
      cores: os.cpus().length,
      memoryGb: Math.round(os.totalmem() / 2 ** 30),
      cpu: os.cpus()[0]?.model.trim() ?? '?',
      node: process.version,
      postgres: '',
      load: os.loadavg()[0].toFixed(1),
    },
  };
  log(`data: lq_bench_${SIZE}`);
  const db = await ensureBenchData(SIZE, { regen: opts.regen, log: (l) => log(l) });
  results.machine!.postgres = await pgVersion(db.url);
  results.data = { size: SIZE, rows: db.rows, edgeBytesPerRow: db.edgeBytesPerRow, seconds: db.seconds, reused: db.reused };

  if (ONLY.has('cache') || ONLY.has('queries')) {
    const key = randomBytes(24).toString('hex');
    log('starting the service (tsx src/main.ts, Redis cache)');
    const service = await startService(db, key);
    const svc = new Service(service.port, key);
    try {
      if (ONLY.has('cache')) {
        log('1. cache hit: autocannon, service vs floor (bench/floor-server.ts)');
        results.cache = await cacheScenario(svc);
      }
      if (ONLY.has('queries')) {
        log('2. uncached queries: service over HTTP vs hand-written SQL with pg');
        await ensureUncachedUsage(svc);
        const floor = await floorClient(db.url);
        const redis = createClient({ url: REDIS_URL });
        await redis.connect();
        const httpFloor = await startProcess(
          'bench/floor-server.ts',
          { REDIS_URL, KEY: 'lqbench:http-floor:none' },
          async (port) => (await fetch(`http://127.0.0.1:${port}/floor`)).status === 404,
        );
        try {
          results.queries = await runScenarios(svc, floor, SCENARIOS, { port: httpFloor.port, redis });
          log('2b. 20 clients at once: the uncached dashboard queries through the service, and the same SQL with pg');
          results.concurrency = await concurrencyScenario(svc, db);
        } finally {
          await floor.end();
          await httpFloor.stop();
          await redis.quit();
        }
      }
    } finally {
      await service.stop();
    }
  }

  if (opts.scaling && results.queries) {
    const other: Size = SIZE === '1m' ? '5m' : '1m';
    log(`3. scaling: the window queries on lq_bench_${SIZE} and lq_bench_${other}, one service on each, requests interleaved`);
    const big = await ensureBenchData(other, { log: (l) => log(l) });
    const [small, large] = SIZE === '1m' ? [db, big] : [big, db];
    const figures = await scalingScenario(
      small,
      large,
      SCENARIOS.filter((s) => s.window),
    );
    results.scaling = { ...figures, largeRows: large.rows, how: 'both databases in this run, one service on each, requests interleaved' };
  } else if (results.queries) {
    // The last --scaling figures at the other size, if any, so the table shows them (marked by their date in the JSON).
    const previous = loadResults(SIZE === '1m' ? '5m' : '1m');
    if (previous?.queries && SIZE === '1m') {
      results.scaling = {
        small: results.queries.filter((q) => SCENARIOS.find((s) => s.id === q.id)?.window),
        large: previous.queries.filter((q) => SCENARIOS.find((s) => s.id === q.id)?.window),
        largeRows: previous.data.rows,
        how: `5M figures from the --scaling run of ${previous.date} (bench/results/5m.json), not side by side: rerun with --scaling`,
      };
    }
  }

  if (ONLY.has('translate')) {
    log('4. translation');
    results.translation = await translationScenario(db);
  }
  if (ONLY.has('ingest')) {
    log('5. ingestion (bench/ingest.ts)');
    results.ingest = await ingestScenario();
  }

  results.totalSeconds = (performance.now() - started) / 1000;
  const r = results as Results;
  const md = renderMarkdown(r);
  console.log('\n' + md + '\n');
  if (!QUICK) saveResults(r);
  if (opts.scaling && r.scaling && !QUICK)
    saveResults({
      ...r,
      data: { ...r.data, size: SIZE === '1m' ? '5m' : '1m', rows: r.scaling.largeRows },
      queries: SIZE === '1m' ? r.scaling.large : r.scaling.small,
    });
  if (!opts['no-write']) {
    writeBenchmarks(r);
    log('BENCHMARKS.md updated');
  }
  log(`done in ${(r.totalSeconds / 60).toFixed(1)} min`);
  if (ONLY.has('hot') && !QUICK) {
    // Hot leaves, both layouts side by side on the same data, its own block of BENCHMARKS.md (bench/hot.ts).
    log('hot leaves (bench/hot.ts)');
    execFileSync('npx', ['tsx', 'bench/hot.ts', ...(opts['no-write'] ? ['--no-write'] : [])], { cwd: ROOT, stdio: 'inherit' });
  }
  if (ONLY.has('studio') && !QUICK) {
    // Studio's explorer pages and reports, and the 7-day API report 8 at once, at this size: the
    // `studio-bench-<size>` block of BENCHMARKS.md (bench/studio.ts). At 10M its 7-day reports take
    // the 15 s limit each: one round.
    log('studio pages (bench/studio.ts)');
    const args = ['--size', SIZE, '--rounds', SIZE === '1m' ? '3' : '1', ...(opts['no-write'] ? ['--no-write'] : [])];
    execFileSync('npx', ['tsx', 'bench/studio.ts', ...args], { cwd: ROOT, stdio: 'inherit' });
  }
}

const RESULTS_DIR = `${ROOT}bench/results`;
function saveResults(r: Results): void {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(`${RESULTS_DIR}/${r.data.size}.json`, JSON.stringify(r, null, 2) + '\n');
}
function loadResults(size: Size): Results | undefined {
  const file = `${RESULTS_DIR}/${size}.json`;
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Results) : undefined;
}

await main();
process.exit(0);
