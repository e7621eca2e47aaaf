/**
 * Postgres stopped and started again under traffic (docs/API.md, "Errors",
 * "Ingestion", "Health, readiness and metrics"), with a real
 * `pg_ctl stop -m fast` on a throwaway cluster of this test (the shared Postgres is never
 * touched). Unlike a cut TCP proxy (faults.test.ts), the server itself terminates every backend
 * (57P01) and then refuses connections. The service runs in its own process, so a crash shows.
 *
 * Asserts: every answer is 200 or 503 with the envelope; while Postgres is down each request
 * answers within a few seconds; the process survives; after `pg_ctl start` every kind of request
 * answers 200 again without a restart; no ingest batch is partial and none answered 503 is
 * stored (except one whose COMMIT raced the stop, which must then be complete); the database
 * sees no more than the pools' connections; SIGTERM still exits 0 afterwards.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { ThrowawayPostgres, envelopeOf, percentiles, report, rowsPerBatch, sleep, startService, type ServiceProcess } from './support.js';

const KEY = 'hardening-pgrestart-admin-key-0123456789';
const POOL = 4;

describe('hardening: Postgres stopped and started under traffic', function () {
  this.timeout(120_000);
  let cluster: ThrowawayPostgres | undefined;
  let svc: ServiceProcess | undefined;
  let direct: pg.Pool | undefined;

  after(async () => {
    await svc?.kill();
    await direct?.end().catch(() => undefined);
    await cluster?.destroy();
  });

  it('when Postgres stops for 4 s under 8 clients, then 503s with the envelope, no crash, no partial batch, and 200s again once it is back', async () => {
    cluster = await ThrowawayPostgres.create();
    const url = await cluster.createDatabase('lq');
    svc = await startService({
      DATABASE_URL: url,
      ADMIN_API_KEY: KEY,
      DB_CONNECT_TIMEOUT_MS: '1000',
      DB_POOL_SIZE: String(POOL),
      QUERY_TIMEOUT_MS: '5000',
    });
    const s = svc;
    const tag = `pgr${Date.now().toString(36)}`;
    const batchBody = (id: string, n: number) =>
      JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: `${id}-${i}`, project: tag, event_message: id })));
    const call = async (path: string, init: { method?: string; body?: string } = {}) => {
      const started = performance.now();
      try {
        const res = await fetch(s.base + path, {
          method: init.method ?? 'GET',
          body: init.body,
          headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
          signal: AbortSignal.timeout(15_000),
        });
        return { status: res.status, text: await res.text(), ms: performance.now() - started };
      } catch (err) {
        return { status: 0, text: (err as Error).message, ms: performance.now() - started };
      }
    };
    assert.equal((await call('/api/logs?source_name=cloudflare.logs.prod', { method: 'POST', body: batchBody('seed', 50) })).status, 200);

    type Kind = 'logs' | 'usage' | 'sandboxed' | 'ingest' | 'mgmt';
    const kinds: Kind[] = ['logs', 'usage', 'sandboxed', 'ingest', 'mgmt'];
    const answers: Array<{ kind: Kind; at: number; status: number; text: string; ms: number; started: number }> = [];
    const batches: Array<{ id: string; status: number }> = [];
    let stop = false;
    let seq = 0;
    const t0 = performance.now();
    const worker = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const kind = kinds[(n + i) % kinds.length];
        const k = seq++;
        const started = performance.now() - t0;
        let a;
        if (kind === 'logs') a = await call(`/api/endpoints/query/logs.all?project=${tag}`);
        else if (kind === 'usage') a = await call(`/api/endpoints/query/usage.api-counts?interval=hourly&project=${tag}-${k}`);
        else if (kind === 'sandboxed')
          a = await call(
            `/api/endpoints/query/logs.all?project=${tag}&sql=${encodeURIComponent(`select count(*) as n from edge_logs where event_message != '${k}'`)}`,
          );
        else if (kind === 'ingest') {
          const id = `${tag}-b${k}`;
          a = await call('/api/logs?source_name=cloudflare.logs.prod', { method: 'POST', body: batchBody(id, 50) });
          batches.push({ id, status: a.status });
        } else a = await call('/api/endpoints');
        answers.push({ kind, at: performance.now() - t0, started, ...a });
        await sleep(10);
      }
    };
    const workers = Array.from({ length: 8 }, (_, n) => worker(n));

    await sleep(2000);
    const stopBegan = performance.now() - t0;
    await cluster.stop();
    const down = performance.now() - t0;
    await sleep(4000);
    const upBegan = performance.now() - t0;
    await cluster.start();
    const up = performance.now() - t0;
    // Until every kind has answered 200 after the restart (at most 15 s), then a little more.
    const recovered = new Map<Kind, number>();
    const deadline = performance.now() + 15_000;
    while (performance.now() < deadline && recovered.size < kinds.length) {
      for (const a of answers) if (a.started > up && a.status === 200 && !recovered.has(a.kind)) recovered.set(a.kind, a.at - up);
      await sleep(50);
    }
    await sleep(1500);
    stop = true;
    await Promise.all(workers);

    const during = answers.filter((a) => a.started >= down && a.at <= upBegan);
    const afterUp = answers.filter((a) => a.started > up + Math.max(...recovered.values(), 0));
    const byStatus = (list: typeof answers) =>
      list.reduce<Record<string, number>>((m, a) => ((m[a.status] = (m[a.status] ?? 0) + 1), m), {});
    report('postgres stop/start', {
      stopMs: Math.round(down - stopBegan),
      startMs: Math.round(up - upBegan),
      requests: answers.length,
      status: byStatus(answers),
      whileDown: { requests: during.length, status: byStatus(during), latency: percentiles(during.map((a) => a.ms)) },
      recoveredMsAfterStart: Object.fromEntries([...recovered].map(([k, v]) => [k, Math.round(v)])),
      afterRecovery: { requests: afterUp.length, status: byStatus(afterUp) },
    });

    assert.equal(s.child.exitCode, null, 'the service is still running');
    assert.doesNotMatch(s.output(), /uncaught|unhandled/i);
    const failures = s
      .output()
      .split('\n')
      .filter((l) => l.includes('request failed') && !/ECONNREFUSED|57P0|KnexTimeout|not queryable|Connection terminated/.test(l))
      .slice(0, 5)
      .map((l) => l.replace(/"stack":"[^"]*",/, ''))
      .join('\n');
    for (const a of answers) {
      assert.ok(
        a.status === 200 || a.status === 503,
        `${a.kind} at ${Math.round(a.at)} ms: ${a.status} ${a.text.slice(0, 300)}\nservice log:\n${failures}`,
      );
      if (a.status === 503) {
        assert.equal(envelopeOf(503, a.text).status, 'UNAVAILABLE');
        assert.doesNotMatch(a.text, /postgres(ql)?:\/\/|SELECT|INSERT|terminating/i);
      }
    }
    assert.ok(during.length > 20, 'requests ran while Postgres was down');
    for (const a of during) assert.equal(a.status, 503, `${a.kind} while down`);
    assert.ok(Math.max(...during.map((a) => a.ms)) < 3000, 'each answered within a few seconds while down');
    assert.equal(recovered.size, kinds.length, `recovered: ${[...recovered.keys()].join(', ')}`);
    assert.ok(Math.max(...recovered.values()) < 5000);
    assert.ok(afterUp.length > 20 && afterUp.every((a) => a.status === 200), `after recovery: ${JSON.stringify(byStatus(afterUp))}`);

    direct = new pg.Pool({ connectionString: url, max: 1 });
    const counts = await rowsPerBatch(direct, tag);
    let raced = 0;
    for (const b of batches) {
      const n = counts.get(b.id) ?? 0;
      assert.ok(n === 0 || n === 50, `batch ${b.id} is partial (${n})`);
      if (b.status === 200) assert.equal(n, 50, `acknowledged ${b.id}`);
      else if (n === 50) raced++;
    }
    assert.ok(raced <= 2, `${raced} batches answered 503 but stored`);
    const { rows: conns } = await direct.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = 'lq' AND application_name LIKE 'logquery%'",
    );
    report('postgres stop/start: ingest and connections', {
      batches: batches.length,
      acknowledged: batches.filter((b) => b.status === 200).length,
      answered503: batches.filter((b) => b.status === 503).length,
      answered503ButStored: raced,
      serviceConnections: conns[0].n,
    });
    assert.ok(conns[0].n <= 2 * POOL + 2, `${conns[0].n} connections`); // pool, reader pool, admin (knex) pool

    s.child.kill('SIGTERM');
    assert.deepEqual(await s.exited, { code: 0, signal: null });
  });
});
