/**
 * Faults with real services (docs/API.md, "Errors", "Caching and warming", "Ingestion"): the
 * service in-process on a real port, driven by concurrent HTTP clients, while
 *   - its own redis-server is killed and restarted under load (no request may fail),
 *   - Postgres disappears behind a TCP proxy (refused, then hanging): 503 with the envelope
 *     within a few seconds, no crash, no leaked connections, no half-written ingest batch, and
 *     recovery without a restart once the proxy forwards again,
 *   - ten slow queries run at once on a pool of three: 504 or 503, never 500, healthy after.
 * The shared Postgres and Redis are never stopped: the proxy and the redis-server are this
 * test's own, and `after` hooks stop them whatever happened.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type net from 'node:net';
import pg from 'pg';
import { createHttpServer } from '../../src/http/server.js';
import { createApp } from '../../src/app.js';
import { createContext, type AppContext } from '../../src/context.js';
import { generateKey } from '../../src/auth/keys.js';
import { createLogger } from '../../src/logger.js';
import { withTransaction } from '../../src/db/transaction.js';
import { ADMIN_URL, createEmptyDatabase, testConfig } from '../support/db.js';
import { OwnRedis, TcpProxy, envelopeOf, percentiles, report, rowsPerBatch, sleep } from './support.js';

interface Service {
  ctx: AppContext;
  server: Server;
  base: string;
  key: string;
  close(): Promise<void>;
}

/** The app on `url` (a fresh database each), listening on 127.0.0.1, with an admin key. */
async function startInProcess(url: string, env: Record<string, string>): Promise<Service> {
  const ctx = await createContext(testConfig(url, env), createLogger(process.env.HARDENING_LOG ?? 'silent'));
  const key = generateKey();
  await ctx.keys.create('hardening', key, ['admin']);
  const app = await createApp(ctx);
  const server = createHttpServer(app).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  let closed = false;
  return {
    ctx,
    server,
    base,
    key,
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ctx.close();
    },
  };
}

interface Answer {
  status: number;
  text: string;
  ms: number;
  cache: string | null;
}

async function call(
  base: string,
  key: string,
  path: string,
  init: { method?: string; body?: string; timeoutMs?: number } = {},
): Promise<Answer> {
  const started = performance.now();
  try {
    const res = await fetch(base + path, {
      method: init.method ?? 'GET',
      headers: { 'X-API-KEY': key, 'Content-Type': 'application/json; charset=utf-8' },
      body: init.body,
      signal: AbortSignal.timeout(init.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    return { status: res.status, text, ms: performance.now() - started, cache: res.headers.get('x-cache') };
  } catch (err) {
    // No HTTP answer at all (connection reset, timeout): status 0, counted as a failure.
    return { status: 0, text: String((err as Error).message), ms: performance.now() - started, cache: null };
  }
}

/**
 * Calls `path` until it answers 200 (each call given `timeoutMs`, `pauseMs` apart): how many ms
 * that took, or NaN when it did not within `withinMs`.
 */
async function msUntilOk(
  s: Pick<Service, 'base' | 'key'>,
  path: string,
  { withinMs, timeoutMs, pauseMs }: { withinMs: number; timeoutMs: number; pauseMs: number },
): Promise<number> {
  const since = performance.now();
  while (performance.now() - since < withinMs) {
    if ((await call(s.base, s.key, path, { timeoutMs })).status === 200) return performance.now() - since;
    await sleep(pauseMs);
  }
  return NaN;
}

function tally(answers: Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}

const USAGE = '/api/endpoints/query/usage.api-counts';
const LOGS = '/api/endpoints/query/logs.all';
const INGEST = '/api/logs?source_name=cloudflare.logs.prod';

describe('hardening: faults', function () {
  this.timeout(120_000);

  describe('Redis killed and restarted under load', () => {
    let redis: OwnRedis | undefined;
    let svc: Service | undefined;

    after(async () => {
      await svc?.close().catch(() => undefined);
      redis?.thaw();
      await redis?.kill();
    });

    it('when 20 clients run cached and uncached queries across a Redis outage, then no request fails', async () => {
      redis = await OwnRedis.start();
      const { url } = await createEmptyDatabase('lq_hard_redis');
      svc = await startInProcess(url, { REDIS_URL: redis.url, DB_POOL_SIZE: '10', CACHE_REDIS_TIMEOUT_MS: '50' });
      const s = svc;
      const tag = `redis-${Date.now().toString(36)}`;
      const events = Array.from({ length: 200 }, (_, i) => ({
        id: `${tag}-${i}`,
        project: tag,
        event_message: `e${i}`,
        metadata: { request: { url: `https://${tag}.example/rest/v1/t${i % 7}`, method: 'GET' } },
      }));
      assert.equal((await call(s.base, s.key, INGEST, { method: 'POST', body: JSON.stringify(events) })).status, 200);

      // Warm-up: the translator and each cached key once, so 'before' measures a warm service.
      for (const interval of ['hourly', 'daily', 'minutely'])
        assert.equal((await call(s.base, s.key, `${USAGE}?interval=${interval}&project=${tag}`)).status, 200);
      assert.equal((await call(s.base, s.key, `${LOGS}?project=${tag}`)).status, 200);

      type Phase = 'before' | 'down' | 'after';
      let phase: Phase = 'before';
      const answers: Array<Answer & { phase: Phase; kind: string }> = [];
      let stop = false;
      const client = async (n: number) => {
        for (let i = 0; !stop; i++) {
          const cached = (n + i) % 4 !== 0; // three in four cached
          const path = cached
            ? `${USAGE}?interval=${['hourly', 'daily', 'minutely'][(n + i) % 3]}&project=${tag}`
            : `${LOGS}?project=${tag}`;
          const a = await call(s.base, s.key, path);
          answers.push({ ...a, phase, kind: cached ? 'cached' : 'uncached' });
        }
      };
      const clients = Array.from({ length: 20 }, (_, n) => client(n));
      await sleep(2000);
      phase = 'down';
      const killedAt = performance.now();
      await redis.kill();
      await sleep(2500);
      await redis.restart();
      phase = 'after';
      const restartedAt = performance.now();
      // Until HITs come back (the restarted Redis is empty: the first request per key is a MISS).
      let firstHitAfter = NaN;
      const deadline = Date.now() + 8000;
      while (Date.now() < deadline) {
        const hit = answers.find((a) => a.phase === 'after' && a.cache === 'HIT');
        if (hit) {
          firstHitAfter = performance.now() - restartedAt;
          break;
        }
        await sleep(50);
      }
      await sleep(1000);
      stop = true;
      await Promise.all(clients);

      const failed = answers.filter((a) => a.status !== 200);
      const byPhase = (p: Phase) => answers.filter((a) => a.phase === p);
      const figures = {
        requests: answers.length,
        failed: failed.length,
        outageMs: Math.round(restartedAt - killedAt),
        status: tally(answers),
        before: { ...percentiles(byPhase('before').map((a) => a.ms)), hits: byPhase('before').filter((a) => a.cache === 'HIT').length },
        down: {
          ...percentiles(byPhase('down').map((a) => a.ms)),
          hits: byPhase('down').filter((a) => a.cache === 'HIT').length,
          misses: byPhase('down').filter((a) => a.cache === 'MISS').length,
        },
        after: { ...percentiles(byPhase('after').map((a) => a.ms)), hits: byPhase('after').filter((a) => a.cache === 'HIT').length },
        hitsResumedAfterMs: Math.round(firstHitAfter),
      };
      report('redis outage under load', figures);
      assert.equal(failed.length, 0, `failed: ${JSON.stringify(failed.slice(0, 3))}`);
      assert.ok(byPhase('down').length > 100, 'requests ran during the outage');
      assert.ok(figures.before.hits > 0, 'cached before');
      assert.ok(Number.isFinite(firstHitAfter), 'HITs resume after Redis is back');
      assert.ok(figures.down.max < 5000, `slowest while Redis is down: ${figures.down.max} ms`);
    });
  });

  describe('Postgres gone (behind a TCP proxy that is cut), then back', () => {
    let proxy: TcpProxy | undefined;
    let svc: Service | undefined;
    let direct: pg.Pool | undefined;

    after(async () => {
      await proxy?.restore().catch(() => undefined);
      await svc?.close().catch(() => undefined);
      await proxy?.stop();
      await direct?.end();
    });

    it('when Postgres is refused and then hangs, then 503 with the envelope within a few seconds, no half-written batch, no leaked connections, and recovery without a restart', async () => {
      const { url, name } = await createEmptyDatabase('lq_hard_pg');
      const admin = new URL(ADMIN_URL);
      proxy = await TcpProxy.start({ host: admin.hostname, port: Number(admin.port || 5432) });
      const viaProxy = new URL(url);
      viaProxy.port = String(proxy.port);
      svc = await startInProcess(viaProxy.toString(), { DB_CONNECT_TIMEOUT_MS: '1000', DB_POOL_SIZE: '4', QUERY_TIMEOUT_MS: '5000' });
      const s = svc;
      const p = proxy;
      direct = new pg.Pool({ connectionString: url, max: 2 });
      const tag = `pg-${Date.now().toString(36)}`;
      const batch = (id: string, size: number) =>
        JSON.stringify({
          batch: Array.from({ length: size }, (_, i) => ({
            id: `${id}-${i}`,
            project: tag,
            event_message: id,
            metadata: { request: { url: `https://x/${i}` } },
          })),
        });
      assert.equal((await call(s.base, s.key, INGEST, { method: 'POST', body: batch('warm', 10) })).status, 200);
      assert.equal((await call(s.base, s.key, `${LOGS}?project=${tag}`)).status, 200);

      const ingestOutcomes: Array<{ id: string; size: number; status: number }> = [];
      const outage = async (label: string, ms: number) => {
        const answers: Array<Answer & { what: string }> = [];
        const end = Date.now() + ms;
        let seq = 0;
        const worker = async (n: number) => {
          while (Date.now() < end) {
            const i = seq++;
            const what = ['logs', 'usage', 'ingest', 'ready', 'mgmt'][(n + i) % 5];
            let a: Answer;
            if (what === 'logs')
              a = await call(s.base, s.key, `${LOGS}?project=${tag}&iso_timestamp_start=2020-01-0${1 + (i % 9)}T00:00:00Z`);
            else if (what === 'usage') a = await call(s.base, s.key, `${USAGE}?interval=hourly&project=${tag}-${label}-${i}`);
            else if (what === 'ingest') {
              const id = `${tag}-${label}-${i}`;
              a = await call(s.base, s.key, INGEST, { method: 'POST', body: batch(id, 50) });
              ingestOutcomes.push({ id, size: 50, status: a.status });
            } else if (what === 'ready') a = await call(s.base, '', '/ready');
            else a = await call(s.base, s.key, '/api/endpoints');
            answers.push({ ...a, what });
          }
        };
        await Promise.all(Array.from({ length: 8 }, (_, n) => worker(n)));
        return answers;
      };

      // 0. Cut while large batches are being written (20 ms after the first large chunk of an
      //    INSERT reaches the proxy): each batch is all or nothing afterwards.
      const midWrite: Array<{ id: string; size: number; status: number }> = [];
      let cutMidWrite: Promise<void> | undefined;
      p.onClientChunk = (bytes) => {
        if (bytes < 16_384 || cutMidWrite) return;
        cutMidWrite = sleep(20).then(() => p.cut());
      };
      const inFlight = Array.from({ length: 6 }, async (_, i) => {
        await sleep(i * 60);
        const id = `${tag}-midwrite-${i}`;
        const a = await call(s.base, s.key, INGEST, { method: 'POST', body: batch(id, 4000) });
        midWrite.push({ id, size: 4000, status: a.status });
      });
      await Promise.all(inFlight);
      assert.ok(cutMidWrite, 'the proxy saw a batch being written');
      await cutMidWrite;
      p.onClientChunk = undefined;
      // 1. Refused: the proxy stops listening and drops every connection.
      await p.cut();
      const refused = await outage('refused', 4000);
      // 2. Hanging: connections are accepted and never answered (the connect timeout applies).
      await p.blackhole();
      const hanging = await outage('hanging', 5000);

      for (const [label, answers] of [
        ['refused', refused],
        ['hanging', hanging],
      ] as const) {
        const summary = { requests: answers.length, status: tally(answers), latency: percentiles(answers.map((a) => a.ms)) };
        report(`postgres ${label}`, summary);
        for (const a of answers) {
          assert.equal(a.status, 503, `${label} ${a.what}: ${a.status} ${a.text.slice(0, 200)}`);
          if (a.what === 'ready') {
            assert.equal(JSON.parse(a.text).database, false); // /ready has its own body, not the envelope
            continue;
          }
          assert.equal(envelopeOf(503, a.text).status, 'UNAVAILABLE');
          assert.doesNotMatch(a.text, /postgres(ql)?:\/\/|SELECT|INSERT|127\.0\.0\.1|ECONNREFUSED/i, 'nothing leaked');
        }
        assert.ok(summary.latency.max < 5000, `${label}: slowest ${summary.latency.max} ms`);
      }
      assert.ok(hanging.some((a) => a.what === 'ingest') && refused.some((a) => a.what === 'ingest'));
      const pool = s.ctx.db.pool;
      report('pool during outage', { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, proxyOpen: p.open });
      assert.ok(pool.totalCount <= 4, `pool holds ${pool.totalCount}`);
      assert.ok(s.ctx.reader!.totalCount <= 4, `reader pool holds ${s.ctx.reader!.totalCount}`);

      // 3. Back: the service answers 200 again without a restart.
      await p.restore();
      const recoveredMs = await msUntilOk(s, `${LOGS}?project=${tag}`, { withinMs: 15_000, timeoutMs: 5000, pauseMs: 50 });
      assert.ok(Number.isFinite(recoveredMs), 'recovered');
      // Every kind of request works, many times over (no poisoned pooled connection).
      const after: Answer[] = [];
      await Promise.all(
        Array.from({ length: 8 }, async (_, n) => {
          for (let i = 0; i < 10; i++) {
            const what = (n + i) % 4;
            if (what === 0) after.push(await call(s.base, s.key, `${LOGS}?project=${tag}`));
            else if (what === 1) after.push(await call(s.base, s.key, `${USAGE}?interval=hourly&project=${tag}-after-${n}-${i}`));
            else if (what === 2)
              after.push(await call(s.base, s.key, INGEST, { method: 'POST', body: batch(`${tag}-after-${n}-${i}`, 5) }));
            else after.push(await call(s.base, s.key, '/api/endpoints'));
          }
        }),
      );
      report('postgres back', {
        recoveredMs: Math.round(recoveredMs),
        requests: after.length,
        status: tally(after),
        latency: percentiles(after.map((a) => a.ms)),
      });
      assert.deepEqual(tally(after), { 200: after.length });
      assert.equal((await call(s.base, '', '/ready')).status, 200);

      // 4. Nothing half-written: every batch is all or nothing; none answered 503 was written
      //    (a cut between COMMIT and its answer could leave a 503 batch complete, but never partial).
      const counts = await rowsPerBatch(direct, tag);
      let written503 = 0;
      for (const o of ingestOutcomes) {
        const n = counts.get(o.id) ?? 0;
        assert.ok(n === 0 || n === o.size, `batch ${o.id} is partial: ${n}/${o.size}`);
        if (n) written503++;
      }
      for (const o of midWrite) {
        const n = counts.get(o.id) ?? 0;
        assert.ok(n === 0 || n === o.size, `batch ${o.id} cut mid-write is partial: ${n}/${o.size}`);
        if (o.status === 200) assert.equal(n, o.size, `acknowledged batch ${o.id} is complete`);
        else assert.equal(o.status, 503);
      }
      report('ingest cut mid-write', {
        batches: midWrite.length,
        status: tally(midWrite.map((o) => ({ status: o.status, text: '', ms: 0, cache: null }))),
        complete: midWrite.filter((o) => counts.get(o.id) === o.size).length,
      });
      report('ingest during outage', {
        batches: ingestOutcomes.length,
        answered503: ingestOutcomes.filter((o) => o.status === 503).length,
        presentAfterwards: written503,
      });
      assert.equal(written503, 0, 'no batch answered 503 was written');

      // 5. No leaked connections: the pool is within its size, nothing waits, and the database
      //    sees at most the pool, the reader pool (endpoint queries) and the admin (knex) pool.
      await sleep(200);
      const { rows: activity } = await direct.query<{ app: string; n: number }>(
        "SELECT application_name AS app, count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'logquery%' GROUP BY 1",
        [name],
      );
      report('connections after recovery', {
        pool: { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount },
        database: activity,
        proxyOpen: p.open,
      });
      assert.ok(pool.totalCount <= 4 && pool.waitingCount === 0);
      assert.ok(s.ctx.reader!.totalCount <= 4 && s.ctx.reader!.waitingCount === 0);
      const total = activity.reduce((sum, r) => sum + r.n, 0);
      assert.ok(total <= 4 + 4 + 2, `${total} connections in the database`);
    });
  });

  describe('Postgres connection stalls mid-query (proxy stops passing data)', () => {
    let proxy: TcpProxy | undefined;
    let svc: Service | undefined;
    after(async () => {
      await proxy?.restore().catch(() => undefined);
      await svc?.close().catch(() => undefined);
      await proxy?.stop();
    });

    it('when established connections stop passing data, then queries answer 503 shortly after QUERY_TIMEOUT_MS instead of hanging, and 200 once data flows again', async () => {
      const { url } = await createEmptyDatabase('lq_hard_stall');
      const admin = new URL(ADMIN_URL);
      proxy = await TcpProxy.start({ host: admin.hostname, port: Number(admin.port || 5432) });
      const viaProxy = new URL(url);
      viaProxy.port = String(proxy.port);
      svc = await startInProcess(viaProxy.toString(), { DB_CONNECT_TIMEOUT_MS: '1000', DB_POOL_SIZE: '3', QUERY_TIMEOUT_MS: '2000' });
      const s = svc;
      const p = proxy;
      const tag = `stall${Date.now().toString(36)}`;
      // Prime the endpoint lookups (cached for 1 s) and open the pool's connections.
      await Promise.all([0, 1, 2].map((i) => call(s.base, s.key, `${LOGS}?project=${tag}-${i}`)));
      await call(s.base, s.key, `${USAGE}?interval=hourly&project=${tag}`);
      p.freeze();
      const answers = await Promise.all([
        call(s.base, s.key, `${LOGS}?project=${tag}-a`, { timeoutMs: 30_000 }),
        call(s.base, s.key, `${LOGS}?project=${tag}-b`, { timeoutMs: 30_000 }),
        call(s.base, s.key, `${USAGE}?interval=daily&project=${tag}-c`, { timeoutMs: 30_000 }),
        call(s.base, s.key, `${LOGS}?project=${tag}-d`, { timeoutMs: 30_000 }),
      ]);
      report('postgres stalls', { status: tally(answers), latency: percentiles(answers.map((a) => a.ms)) });
      for (const a of answers) {
        assert.equal(a.status, 503, a.text.slice(0, 200));
        assert.equal(envelopeOf(503, a.text).status, 'UNAVAILABLE');
        assert.ok(a.ms < 2000 + 5000 + 3000, `answered after ${Math.round(a.ms)} ms`);
      }
      await p.restore();
      const recoveredMs = await msUntilOk(s, `${LOGS}?project=${tag}`, { withinMs: 20_000, timeoutMs: 15_000, pauseMs: 100 });
      report('postgres stalls: recovery', { recoveredMs: Math.round(recoveredMs) });
      assert.ok(Number.isFinite(recoveredMs), 'recovered');
      const after = await Promise.all(Array.from({ length: 6 }, (_, i) => call(s.base, s.key, `${LOGS}?project=${tag}-after-${i}`)));
      assert.deepEqual(tally(after), { 200: 6 });
    });
  });

  describe('withTransaction on a stalled connection', () => {
    let proxy: TcpProxy | undefined;
    let pool: pg.Pool | undefined;
    after(async () => {
      await proxy?.restore().catch(() => undefined);
      await pool?.end().catch(() => undefined);
      await proxy?.stop();
    });

    it('when the connection stalls inside a transaction, then it fails after the read timeout and the client is dropped, not reused', async () => {
      const admin = new URL(ADMIN_URL);
      proxy = await TcpProxy.start({ host: admin.hostname, port: Number(admin.port || 5432) });
      const viaProxy = new URL(ADMIN_URL);
      viaProxy.port = String(proxy.port);
      // The service's pool has the same shape with a 60 s read timeout (db/pool.ts); 500 ms here.
      pool = new pg.Pool({ connectionString: viaProxy.toString(), max: 1, query_timeout: 500, connectionTimeoutMillis: 1000 });
      pool.on('connect', (c) => c.on('error', () => undefined));
      pool.on('error', () => undefined);
      const p = proxy;
      assert.equal(await withTransaction(pool, async (c) => (await c.query('SELECT 1 AS one')).rows[0].one), 1);
      const started = performance.now();
      const failed = await withTransaction(pool, async (c) => {
        p.freeze();
        await c.query('SELECT 2');
      }).then(
        () => 'ok',
        (err: Error) => err.message,
      );
      const ms = performance.now() - started;
      assert.equal(failed, 'Query read timeout');
      assert.ok(ms < 1500, `failed after ${Math.round(ms)} ms (no second wait for ROLLBACK)`);
      assert.equal(pool.totalCount, 0, 'the stalled client left the pool');
      await p.restore();
      assert.equal(await withTransaction(pool, async (c) => (await c.query('SELECT 3 AS three')).rows[0].three), 3, 'a fresh client works');
      report('withTransaction on a stalled connection', { failedAfterMs: Math.round(ms) });
    });
  });

  describe('slow queries at once on a small pool', () => {
    let svc: Service | undefined;
    after(async () => svc?.close().catch(() => undefined));

    it('when 10 queries run past QUERY_TIMEOUT_MS at once on a pool of 3, then each is 504 or 503 (none 500), and the service is healthy after', async () => {
      const { url } = await createEmptyDatabase('lq_hard_slow');
      svc = await startInProcess(url, { QUERY_TIMEOUT_MS: '400', DB_POOL_SIZE: '3', DB_CONNECT_TIMEOUT_MS: '1000' });
      const s = svc;
      const tag = `slow${Date.now().toString(36)}`;
      const events = Array.from({ length: 400 }, (_, i) => ({ id: `${tag}-${i}`, project: tag, event_message: 'x' }));
      assert.equal((await call(s.base, s.key, INGEST, { method: 'POST', body: JSON.stringify(events) })).status, 200);
      const slowSql = 'select count(*) as n from edge_logs a cross join edge_logs b cross join edge_logs c cross join edge_logs d';
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => call(s.base, s.key, `${LOGS}?project=${tag}&sql=${encodeURIComponent(slowSql)}`)),
      );
      const wall = performance.now() - started;
      report('10 slow queries, pool 3', {
        status: tally(answers),
        latency: percentiles(answers.map((a) => a.ms)),
        wallMs: Math.round(wall),
      });
      for (const a of answers) {
        assert.ok(a.status === 504 || a.status === 503, `${a.status}: ${a.text.slice(0, 200)}`);
        const e = envelopeOf(a.status, a.text);
        assert.equal(e.status, a.status === 504 ? 'DEADLINE_EXCEEDED' : 'UNAVAILABLE');
        assert.ok(!a.text.includes('cross join'));
      }
      assert.ok(answers.some((a) => a.status === 504));
      const pool = s.ctx.db.pool;
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query ILIKE '%cross join%' AND pid <> pg_backend_pid()`,
      );
      assert.equal(rows[0].n, 0, 'no cancelled query is still running');
      assert.ok(pool.totalCount <= 3 && pool.waitingCount === 0, `pool ${pool.totalCount}/${pool.waitingCount}`);
      const reader = s.ctx.reader!; // endpoint queries run here
      assert.ok(reader.totalCount <= 3 && reader.waitingCount === 0, `reader pool ${reader.totalCount}/${reader.waitingCount}`);
      const ok = await Promise.all(
        Array.from({ length: 6 }, () =>
          call(s.base, s.key, `${LOGS}?project=${tag}&sql=${encodeURIComponent('select count(*) as n from edge_logs')}`),
        ),
      );
      for (const a of ok) assert.equal(a.text, '{"result":[{"n":400}]}');
      assert.equal((await call(s.base, '', '/ready')).status, 200);
    });
  });
});
