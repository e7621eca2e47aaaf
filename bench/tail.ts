/**
 * Live tail's cost to the database (src/lql/tail.ts, src/lql/arrivals.ts): 50 viewers of the
 * bench's edge source (`cloudflare.logs.prod` of `lq_bench_1m`, 850k rows) with five different
 * LQL searches, while nothing arrives, while 10 batches a second arrive, and while 4 senders
 * ingest as fast as they can. The target (issue 30): at most 50 queries a second in all for 50
 * viewers however many events arrive, and none while none arrive.
 *
 * How queries are counted: the service's own counter of tail queries
 * (`logquery_tail_query_duration_seconds` on /metrics: its count, and its sum for the mean time of
 * one), read before and after each phase; the one query that checks a stream's LQL when it opens
 * is not in it. pg_stat_statements is not loaded on this machine's Postgres, so as a
 * cross-check the database's committed transactions (`pg_stat_database.xact_commit` of the bench
 * database, read from the `postgres` database) are shown too: they include the ingest writes and
 * the service's background jobs (a phase without viewers gives that baseline), and Postgres
 * flushes those counters about once a second, so they are approximate.
 *
 * The service runs in its own process without REDIS_URL (the signal in-process): on the shared
 * Redis, other services' arrivals would reach these viewers. The events it ingests are deleted
 * at the end, so the bench data stays as it was.
 *
 *   npx tsx bench/tail.ts [--size 1m] [--viewers 50] [--seconds 10] [--measure-only] [--no-write]
 *
 * `--measure-only` takes the data as it is (no top-up of bench/data.ts).
 */
import { openTail } from '../test/support/tail.js';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { generateKey } from '../src/auth/keys.js';
import { qualifiedTable } from '../src/storage/logTables.js';
import { ADMIN_URL, databaseUrl } from '../test/support/db.js';
import { startService, type ServiceProcess } from '../test/hardening/support.js';
import { benchEnv, ensureBenchData, eventFor, rng, SIZES, valuesFor, type Size } from './data.js';

const { values: opts } = parseArgs({
  options: {
    size: { type: 'string', default: '1m' },
    viewers: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '10' },
    'measure-only': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
  },
});
const SIZE = opts.size as Size;
if (!(SIZE in SIZES)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const VIEWERS = Number(opts.viewers);
const SECONDS = Number(opts.seconds);
const SOURCE = 'cloudflare.logs.prod';
/** What the viewers search for, in turn (viewer i takes LQLS[i % 5]); '' is every event. */
const LQLS = ['', 'm.response.status_code:>=500', 'm.request.method:POST', 'GET', 'm.request.cf.country:US -m.response.status_code:200'];
const RUN = randomBytes(4).toString('hex');
const MARK = `tail-bench ${RUN}`;

const log = (line: string) => console.error(line);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN;
};

/** When the service acknowledged each event (by its number). */
const acked = new Map<string, number>();

interface Viewer {
  lql: string;
  /** [event number, when it reached this viewer], per event received in this phase. */
  receipts: [string, number][];
  received: number;
  close(): void;
}

async function openViewer(service: ServiceProcess, key: string, lql: string): Promise<Viewer> {
  const viewer: Viewer = { lql, receipts: [], received: 0, close: () => undefined };
  const stream = await openTail(service.base, SOURCE, key, lql, (events, now) => {
    for (const e of events) {
      viewer.received++;
      const number = new RegExp(`^${MARK} (\\d+) `).exec(e.event_message)?.[1];
      if (number) viewer.receipts.push([number, now]);
    }
  });
  viewer.close = stream.close;
  return viewer;
}

const random = rng(30);
let sequence = 0;
/** `n` edge events as the bench data has them, marked and numbered in their message. */
function batch(n: number): object[] {
  return Array.from({ length: n }, () => {
    const event = eventFor(SOURCE, valuesFor(SOURCE, random));
    return { ...event, event_message: `${MARK} ${sequence++} ${String(event.event_message)}` };
  });
}

async function main(): Promise<void> {
  const db = opts['measure-only']
    ? { url: databaseUrl(ADMIN_URL, `lq_bench_${SIZE}`), name: `lq_bench_${SIZE}`, rows: SIZES[SIZE].rows }
    : await ensureBenchData(SIZE, { log });
  const stats = new pg.Client({ connectionString: ADMIN_URL });
  await stats.connect();
  const commits = async () =>
    Number((await stats.query('SELECT xact_commit FROM pg_stat_database WHERE datname = $1', [db.name])).rows[0].xact_commit);
  const key = generateKey();
  log(`starting the service on ${db.name} (no REDIS_URL: the signal in-process)`);
  const service = await startService(
    { ...benchEnv(), DATABASE_URL: db.url, REDIS_URL: '', ADMIN_API_KEY: key, QUERY_TIMEOUT_MS: '60000' },
    { readyTimeoutMs: 180_000 },
  );
  /** Tail queries so far, and their seconds in all. */
  const tailQueries = async () => {
    const text = await (await fetch(`${service.base}/metrics`)).text();
    const value = (name: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(name + ' '))
          ?.split(' ')[1] ?? 0,
      );
    return { n: value('logquery_tail_query_duration_seconds_count'), seconds: value('logquery_tail_query_duration_seconds_sum') };
  };
  let ingested = 0;
  const ingest = async (events: object[]) => {
    const res = await fetch(`${service.base}/api/logs?source_name=${SOURCE}`, {
      method: 'POST',
      headers: { 'X-API-KEY': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(events),
    });
    if (res.status !== 200) throw new Error(`ingest: ${res.status} ${await res.text()}`);
    ingested += events.length;
    const now = Date.now();
    for (const e of events as { event_message: string }[]) acked.set(e.event_message.split(' ')[2], now);
  };
  let viewers: Viewer[] = [];
  const phases: Phase[] = [];

  /** One phase: `work` runs for `seconds` while queries and commits are counted. */
  async function phase(name: string, seconds: number, work: (until: number) => Promise<void>): Promise<void> {
    for (const v of viewers) v.receipts.length = 0;
    const [q0, c0, e0] = [await tailQueries(), await commits(), ingested];
    const started = Date.now();
    await work(started + seconds * 1000);
    // Arrivals of the last second are queried within a second; the counters are flushed about once a second.
    await sleep(1500);
    const elapsed = (Date.now() - started) / 1000;
    const [q1, c1] = [await tailQueries(), await commits()];
    // A viewer may be sent an event a moment before its sender reads the acknowledgement: 0 ms then.
    const lags = viewers.flatMap((v) => v.receipts.map(([n, at]) => Math.max(0, at - (acked.get(n) ?? at))));
    const p: Phase = {
      name,
      viewers: viewers.length,
      seconds: +elapsed.toFixed(1),
      events: ingested - e0,
      queries: q1.n - q0.n,
      queriesPerSecond: +((q1.n - q0.n) / elapsed).toFixed(1),
      meanQueryMs: q1.n > q0.n ? Math.round(((q1.seconds - q0.seconds) * 1000) / (q1.n - q0.n)) : NaN,
      commitsPerSecond: +((c1 - c0) / elapsed).toFixed(1),
      delivered: lags.length,
      lagP50: median(lags),
      lagP95: pct(lags, 0.95),
    };
    phases.push(p);
    log(`${name}: ${JSON.stringify(p)}`);
  }

  const idle = async (until: number) => {
    await sleep(Math.max(0, until - Date.now()));
  };
  /** 10 batches of 20 events a second. */
  const steady = async (until: number) => {
    while (Date.now() < until) {
      const next = Date.now() + 100;
      await ingest(batch(20));
      await sleep(Math.max(0, next - Date.now()));
    }
  };
  /** 4 senders, batches of 100, as fast as the service takes them. */
  const flood = (until: number) =>
    Promise.all(
      Array.from({ length: 4 }, async () => {
        while (Date.now() < until) await ingest(batch(100));
      }),
    ).then(() => undefined);

  let allViewer: Viewer | undefined;
  try {
    log('warm-up: one batch with no viewer (first ingest of the process), then 10 s for the start-up jobs');
    await ingest(batch(20));
    await sleep(10_000);
    await phase('no viewers, nothing arriving', SECONDS, idle);
    log(`opening ${VIEWERS} viewers`);
    viewers = await Promise.all(Array.from({ length: VIEWERS }, (_, i) => openViewer(service, key, LQLS[i % LQLS.length])));
    allViewer = viewers.find((v) => v.lql === '');
    await phase(`${VIEWERS} viewers, nothing arriving`, SECONDS, idle);
    const before = allViewer?.received ?? 0;
    const sentBefore = ingested;
    await phase(`${VIEWERS} viewers, 10 batches of 20 events a second`, SECONDS, steady);
    await phase(`${VIEWERS} viewers, 4 senders flat out (batches of 100)`, SECONDS, flood);
    // The viewers' backlog of the flood is queried first (at most one query a second each), then the idle phase.
    for (let last = -1, now = (await tailQueries()).n; now !== last;) {
      await sleep(2000);
      [last, now] = [now, (await tailQueries()).n];
    }
    await phase(`${VIEWERS} viewers, nothing arriving (after)`, SECONDS, idle);
    const check = { sent: ingested - sentBefore, receivedByTheViewerOfEverything: (allViewer?.received ?? 0) - before };
    log(`the viewer of every event: ${JSON.stringify(check)}`);
    const result: Result = {
      date: new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC',
      load: loadavg()[0].toFixed(1),
      database: db.name,
      rows: db.rows,
      phases,
      check,
    };
    console.log(render(result));
    if (!opts['no-write']) {
      writeBenchmarks(result);
      log('BENCHMARKS.md updated');
    }
  } finally {
    for (const v of viewers) v.close();
    await service.kill();
    // The bench's events leave the bench data.
    const data = new pg.Client({ connectionString: db.url });
    await data.connect();
    const { rows } = await data.query<{ table_name: string }>('SELECT table_name FROM sources WHERE name = $1', [SOURCE]);
    const deleted = await data.query(`DELETE FROM ${qualifiedTable(rows[0].table_name)} WHERE event_message LIKE $1`, [`${MARK} %`]);
    log(`deleted the ${deleted.rowCount} events of this run`);
    await data.end();
    await stats.end();
  }
}

interface Phase {
  name: string;
  viewers: number;
  seconds: number;
  events: number;
  queries: number;
  queriesPerSecond: number;
  meanQueryMs: number;
  commitsPerSecond: number;
  delivered: number;
  lagP50: number;
  lagP95: number;
}
interface Result {
  date: string;
  load: string;
  database: string;
  rows: number;
  phases: Phase[];
  check: { sent: number; receivedByTheViewerOfEverything: number };
}

function render(r: Result): string {
  const ms = (x: number) => (Number.isNaN(x) ? '–' : `${x} ms`);
  const lines = [
    `${r.date}, \`${r.database}\` (${r.rows.toLocaleString('en')} rows), load average ${r.load} on 2 shared cores: noisy figures.`,
    `${VIEWERS} viewers of \`${SOURCE}\`, LQL in turn: ${LQLS.map((l) => `\`${l || '(everything)'}\``).join(', ')}.`,
    '',
    '| phase | s | events in | tail queries | queries/s (target ≤ 50; 0 idle) | mean query | commits/s in the database | events delivered | acknowledged → at the viewer p50 / p95 |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.phases.map(
      (p) =>
        `| ${p.name} | ${p.seconds} | ${p.events} | ${p.queries} | **${p.queriesPerSecond}** | ${ms(p.meanQueryMs)} | ${p.commitsPerSecond} | ${p.delivered} | ${ms(p.lagP50)} / ${ms(p.lagP95)} |`,
    ),
    '',
    `The viewer of every event (empty LQL) received ${r.check.receivedByTheViewerOfEverything} of the ${r.check.sent} events sent while it watched.`,
  ];
  return lines.join('\n');
}

function writeBenchmarks(r: Result): void {
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  const text = readFileSync(file, 'utf8');
  const block = `<!-- tail-bench:start -->\n${render(r)}\n<!-- tail-bench:end -->`;
  if (!text.includes('<!-- tail-bench:start -->')) throw new Error('BENCHMARKS.md has no tail-bench block');
  writeFileSync(file, text.replace(/<!-- tail-bench:start -->[^]*<!-- tail-bench:end -->/, block));
}

await main();
