/**
 * Load (about 45 s): the real service in its own process (own redis-server as the cache, a
 * fresh database), 100 autocannon connections of mixed traffic, each connection cycling
 *   cached      usage.api-counts, same parameters every time (X-Cache: HIT after the first)
 *   uncached    logs.all
 *   sandboxed   logs.all with `sql`
 *   ingest      a batch of 20 events with unique ids
 * Asserts: zero 5xx and zero connection errors or timeouts; heap and RSS roughly flat between
 * the end of a warm-up run and the end of the main run (measured after a forced GC in the
 * service, see memory-probe.ts); every acknowledged batch present in full afterwards.
 *
 * Durations: HARDENING_LOAD_SECONDS (default 30) for the main run, a third of it for warm-up.
 */
import assert from 'node:assert/strict';
import autocannon from 'autocannon';
import pg from 'pg';
import { createEmptyDatabase } from '../support/db.js';
import { OwnRedis, report, sleep, startService, type ServiceProcess } from './support.js';

const KEY = 'hardening-load-admin-key-0123456789';
const BATCH = 20;
const CONNECTIONS = 100;
const MAIN_SECONDS = Number(process.env.HARDENING_LOAD_SECONDS ?? 30);
const WARM_SECONDS = Math.max(5, Math.round(MAIN_SECONDS / 3));

interface Memory {
  gc: boolean;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** SIGUSR2 to the service: a forced GC there, then its memory figures. */
async function memoryOf(svc: ServiceProcess): Promise<Memory> {
  const before = svc.output().split('HARDENING_MEM ').length;
  svc.child.kill('SIGUSR2');
  for (let i = 0; i < 100; i++) {
    const parts = svc.output().split('HARDENING_MEM ');
    if (parts.length > before) return JSON.parse(parts[parts.length - 1].split('\n')[0]) as Memory;
    await sleep(50);
  }
  throw new Error('the service did not report its memory');
}

const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;

describe('hardening: load', function () {
  this.timeout((MAIN_SECONDS + WARM_SECONDS) * 1000 + 120_000);
  let svc: ServiceProcess | undefined;
  let redis: OwnRedis | undefined;
  let pool: pg.Pool | undefined;

  after(async () => {
    await svc?.kill();
    await redis?.kill();
    await pool?.end();
  });

  it(`when ${CONNECTIONS} connections send mixed traffic for ${MAIN_SECONDS} s, then no 5xx, flat memory, and every acknowledged event is stored`, async () => {
    const started = Date.now();
    redis = await OwnRedis.start();
    const { url } = await createEmptyDatabase('lq_hard_load');
    svc = await startService(
      { DATABASE_URL: url, REDIS_URL: redis.url, ADMIN_API_KEY: KEY, LOG_LEVEL: 'warn', QUERY_TIMEOUT_MS: '15000' },
      { nodeArgs: ['--expose-gc', '--import', './test/hardening/memory-probe.ts'] },
    );
    const s = svc;
    const tag = `load${Date.now().toString(36)}`;
    const seed = await fetch(`${s.base}/api/logs?source_name=cloudflare.logs.prod`, {
      method: 'POST',
      headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify(
        Array.from({ length: 2000 }, (_, i) => ({
          id: `${tag}-seed-${i}`,
          project: tag,
          event_message: 'seed',
          timestamp: Date.now() - i * 1000,
          metadata: { request: { url: `https://${tag}.supabase.co/rest/v1/t${i % 13}`, method: 'GET' }, response: { status_code: 200 } },
        })),
      ),
    });
    assert.equal(seed.status, 200);

    const acknowledged = new Set<string>();
    const sentBatches = new Set<string>();
    const wrongBodies: string[] = [];
    let seq = 0;
    const headers = { 'X-API-KEY': KEY, 'Content-Type': 'application/json; charset=utf-8' };
    const check = (kind: string, expect: RegExp) => (status: number, body: string) => {
      if (status === 200 && !expect.test(body) && wrongBodies.length < 5) wrongBodies.push(`${kind}: ${body.slice(0, 200)}`);
    };
    const requests: autocannon.Request[] = [
      {
        method: 'GET',
        path: `/api/endpoints/query/usage.api-counts?interval=hourly&project=${tag}`,
        headers,
        onResponse: check('cached', /^\{"result":\[/),
      },
      {
        method: 'GET',
        path: `/api/endpoints/query/logs.all?project=${tag}`,
        headers,
        onResponse: check('uncached', /^\{"result":\[\{"id":/),
      },
      {
        method: 'GET',
        path: `/api/endpoints/query/logs.all?project=${tag}&sql=${encodeURIComponent('select id, timestamp, event_message from edge_logs where event_message != @project order by timestamp desc limit 20')}`,
        headers,
        onResponse: check('sandboxed', /^\{"result":\[\{"id":/),
      },
      {
        method: 'POST',
        path: '/api/logs?source_name=cloudflare.logs.prod',
        headers,
        setupRequest: (req, context) => {
          const id = `${tag}-b${seq++}`;
          (context as { batch?: string }).batch = id;
          sentBatches.add(id);
          const now = Date.now();
          const batch = Array.from({ length: BATCH }, (_, i) => ({
            id: `${id}-${i}`,
            project: tag,
            event_message: id,
            timestamp: now,
            metadata: { request: { url: `https://${tag}.supabase.co/rest/v1/x`, method: 'POST' } },
          }));
          return { ...req, body: JSON.stringify({ batch }) };
        },
        onResponse: (status, body, context) => {
          if (status === 200) {
            if (body === `{"message":"Logged!","count":${BATCH}}`) acknowledged.add((context as { batch?: string }).batch!);
            else if (wrongBodies.length < 5) wrongBodies.push(`ingest: ${body.slice(0, 200)}`);
          }
        },
      },
    ];
    const run = (seconds: number) => autocannon({ url: s.base, connections: CONNECTIONS, duration: seconds, timeout: 30, requests });
    const summarize = (r: autocannon.Result) => ({
      requests: r.requests.total,
      rps: Math.round(r.requests.average),
      status: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])),
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    });

    const baseline = await memoryOf(s);
    const warm = await run(WARM_SECONDS);
    await sleep(500);
    const afterWarm = await memoryOf(s);
    const main = await run(MAIN_SECONDS);
    await sleep(500);
    const afterMain = await memoryOf(s);

    report('load warm-up', summarize(warm));
    report('load main', summarize(main));
    const memory = {
      gcForced: afterMain.gc,
      baselineMB: { heap: mb(baseline.heapUsed), rss: mb(baseline.rss) },
      afterWarmMB: { heap: mb(afterWarm.heapUsed), rss: mb(afterWarm.rss), external: mb(afterWarm.external) },
      afterMainMB: { heap: mb(afterMain.heapUsed), rss: mb(afterMain.rss), external: mb(afterMain.external) },
    };
    report('load memory', memory);

    for (const [label, r] of [
      ['warm-up', warm],
      ['main', main],
    ] as const) {
      const fivexx = Object.entries(r.statusCodeStats ?? {}).filter(([code]) => Number(code) >= 500);
      assert.deepEqual(fivexx, [], `${label}: 5xx answers`);
      assert.equal(r.non2xx, 0, `${label}: non-2xx answers ${JSON.stringify(r.statusCodeStats)}`);
      assert.equal(r.errors, 0, `${label}: connection errors`);
      assert.equal(r.timeouts, 0, `${label}: timeouts`);
    }
    assert.deepEqual(wrongBodies, []);
    assert.ok(main.requests.total > MAIN_SECONDS * 20, `throughput: ${main.requests.total} requests`);

    // Memory: flat between the end of warm-up and the end of a run three times as long.
    assert.ok(afterMain.gc, 'GC was forced in the service');
    const heapGrowth = afterMain.heapUsed - afterWarm.heapUsed;
    assert.ok(
      heapGrowth < Math.max(20 * 1024 * 1024, afterWarm.heapUsed * 0.25),
      `heap grew ${mb(heapGrowth)} MB (${mb(afterWarm.heapUsed)} → ${mb(afterMain.heapUsed)})`,
    );
    const rssGrowth = afterMain.rss - afterWarm.rss;
    assert.ok(
      rssGrowth < Math.max(64 * 1024 * 1024, afterWarm.rss * 0.3),
      `RSS grew ${mb(rssGrowth)} MB (${mb(afterWarm.rss)} → ${mb(afterMain.rss)})`,
    );

    // Every acknowledged batch is stored in full; none is partial (in-flight ones at the end may be either).
    await sleep(1000);
    pool = new pg.Pool({ connectionString: url, max: 1 });
    const { rows } = await pool.query<{ batch: string; n: number }>(
      "SELECT event_message AS batch, count(*)::int AS n FROM logs.cloudflare_logs_prod WHERE project = $1 AND event_message <> 'seed' GROUP BY 1",
      [tag],
    );
    const counts = new Map(rows.map((r) => [r.batch, r.n]));
    const missing = [...acknowledged].filter((id) => counts.get(id) !== BATCH);
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged batches are not complete`);
    for (const [id, n] of counts) {
      assert.equal(n, BATCH, `batch ${id} is partial`);
      assert.ok(sentBatches.has(id));
    }
    report('load ingest', {
      batchesSent: sentBatches.size,
      acknowledged: acknowledged.size,
      eventsAcknowledged: acknowledged.size * BATCH,
      batchesStored: counts.size,
      eventsStored: [...counts.values()].reduce((a, b) => a + b, 0),
      runtimeS: Math.round((Date.now() - started) / 1000),
    });
    assert.ok(acknowledged.size > 0);
  });
});
