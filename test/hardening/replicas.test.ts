/**
 * Read replicas (DATABASE_READ_URLS, docs/API.md "Configuration", src/db/replicas.ts) against a
 * real streaming standby: a throwaway primary of this test (never the shared cluster) and a
 * `pg_basebackup -R` copy of it started on its own port. The service runs in its own process.
 *
 * Asserts: endpoint queries are served by the standby (its metrics and its own connections say
 * so) while ingest and management write to the primary; a standby whose replay is paused falls
 * more than MAX_REPLICA_LAG_MS behind, is skipped (queries see rows it has not replayed) and
 * takes queries again once it catches up; stopping the standby under 8 clients fails no request.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { ThrowawayPostgres, envelopeOf, eventually, report, sleep, startService, type ServiceProcess } from './support.js';

const KEY = 'hardening-replicas-admin-key-0123456789';

describe('hardening: endpoint queries on a streaming standby', function () {
  this.timeout(180_000);
  let primary: ThrowawayPostgres | undefined;
  let standby: ThrowawayPostgres | undefined;
  let svc: ServiceProcess | undefined;

  after(async () => {
    await svc?.kill();
    await standby?.destroy();
    await primary?.destroy();
  });

  async function metric(name: string, labels: string): Promise<number> {
    const text = await (await fetch(`${svc!.base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  async function call(path: string, init: { method?: string; body?: string } = {}) {
    try {
      const res = await fetch(svc!.base + path, {
        method: init.method ?? 'GET',
        body: init.body,
        headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
        signal: AbortSignal.timeout(20_000),
      });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      return { status: 0, text: (err as Error).message };
    }
  }

  async function ingest(project: string, message: string, n = 5) {
    const body = JSON.stringify(Array.from({ length: n }, () => ({ project, event_message: message })));
    const res = await call('/api/logs?source_name=cloudflare.logs.prod', { method: 'POST', body });
    assert.equal(res.status, 200, res.text);
  }

  async function messages(project: string): Promise<string[]> {
    const res = await call(`/api/endpoints/query/logs.all?project=${project}`);
    assert.equal(res.status, 200, res.text);
    return (JSON.parse(res.text).result as Array<{ event_message: string }>).map((r) => r.event_message);
  }

  it('serves queries from the standby, skips it while it lags, and loses no request when it stops under load', async () => {
    primary = await ThrowawayPostgres.create();
    const url = await primary.createDatabase('lq');
    standby = await primary.standby();
    const name = `127.0.0.1:${standby.port}`;
    const replicaLabel = `target="${name}"`;

    svc = await startService({
      DATABASE_URL: url,
      // No database in the entry: the primary's (lq) is used.
      DATABASE_READ_URLS: `postgresql://127.0.0.1:${standby.port}`,
      ADMIN_API_KEY: KEY,
      MAX_REPLICA_LAG_MS: '1500',
      REPLICA_CHECK_INTERVAL_MS: '200',
      DB_CONNECT_TIMEOUT_MS: '2000',
      DB_POOL_SIZE: '4',
    });
    const standbyDb = new pg.Client({ connectionString: standby.databaseUrl('lq') });
    await standbyDb.connect();
    try {
      // 1. Queries go to the standby. The rows were written on the primary (ingest) and replayed.
      const tag = `rep${Date.now().toString(36)}`;
      await ingest(tag, 'first');
      assert.ok(await eventually(async () => (await metric('logquery_replica_healthy', `replica="${name}"`)) === 1, 10_000));
      assert.ok(await eventually(async () => (await messages(tag)).length === 5, 10_000), 'the standby shows the ingested rows');
      const before = {
        replica: await metric('logquery_query_routes_total', replicaLabel),
        primary: await metric('logquery_query_routes_total', 'target="primary"'),
      };
      for (let i = 0; i < 10; i++) assert.deepEqual(await messages(tag), Array(5).fill('first'));
      assert.equal((await metric('logquery_query_routes_total', replicaLabel)) - before.replica, 10);
      assert.equal((await metric('logquery_query_routes_total', 'target="primary"')) - before.primary, 0);
      const { rows: readers } = await standbyDb.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = 'logquery_reader' AND application_name = 'logquery-reader'",
      );
      assert.ok(readers[0].n > 0, 'the service holds reader connections on the standby');

      // 2. Replay paused: the standby falls behind; past MAX_REPLICA_LAG_MS it is skipped, and the
      // primary answers with the rows the standby has not replayed.
      await standbyDb.query('SELECT pg_wal_replay_pause()');
      await ingest(tag, 'second');
      const lagging = await eventually(async () => {
        // Keep the primary's WAL moving, as a live primary does.
        await ingest(`${tag}x`, 'tick', 1);
        return (await metric('logquery_replica_healthy', `replica="${name}"`)) === 0;
      }, 15_000);
      assert.ok(lagging, 'a paused standby is skipped once it lags past the limit');
      assert.ok((await metric('logquery_replica_lag_seconds', `replica="${name}"`)) >= 1.5);
      const skipped = await metric('logquery_query_routes_total', replicaLabel);
      assert.equal((await messages(tag)).filter((m) => m === 'second').length, 5, 'the primary answers while the standby lags');
      assert.equal(await metric('logquery_query_routes_total', replicaLabel), skipped);
      await standbyDb.query('SELECT pg_wal_replay_resume()');
      assert.ok(await eventually(async () => (await metric('logquery_replica_healthy', `replica="${name}"`)) === 1, 10_000));
      assert.equal((await messages(tag)).length, 10);
      assert.equal(await metric('logquery_query_routes_total', replicaLabel), skipped + 1, 'caught up: back on the standby');
    } finally {
      await standbyDb.end().catch(() => undefined);
    }

    // 3. 8 clients of queries and ingest; the standby stops in the middle. No request may fail.
    const answers: Array<{ status: number; text: string; kind: string }> = [];
    let stop = false;
    const load = `load${Date.now().toString(36)}`;
    await ingest(load, 'load', 20);
    await sleep(500);
    const worker = async (n: number) => {
      for (let i = 0; !stop; i++) {
        if ((n + i) % 4 === 0) {
          const body = JSON.stringify([{ project: load, event_message: 'more' }]);
          answers.push({ kind: 'ingest', ...(await call('/api/logs?source_name=cloudflare.logs.prod', { method: 'POST', body })) });
        } else answers.push({ kind: 'query', ...(await call(`/api/endpoints/query/logs.all?project=${load}`)) });
      }
    };
    const workers = Array.from({ length: 8 }, (_, n) => worker(n));
    await sleep(1500);
    const onStandbyBefore = await metric('logquery_query_routes_total', replicaLabel);
    assert.ok(onStandbyBefore > 0);
    await standby.stop();
    const stoppedAt = answers.length;
    await sleep(3000);
    stop = true;
    await Promise.all(workers);

    const failed = answers.filter((a) => a.status !== 200);
    for (const f of failed.slice(0, 3)) if (f.status >= 400) envelopeOf(f.status, f.text);
    report('standby stopped under 8 clients', {
      requests: answers.length,
      afterStop: answers.length - stoppedAt,
      failed: failed.length,
      retried: await metric('logquery_replica_retries_total', `replica="${name}"`),
    });
    assert.equal(failed.length, 0, `failed: ${JSON.stringify(failed.slice(0, 3))}`);
    assert.ok(answers.length - stoppedAt > 20, 'requests kept being answered after the stop');
    assert.equal(await metric('logquery_replica_healthy', `replica="${name}"`), 0);
    const primaryRuns = await metric('logquery_query_routes_total', 'target="primary"');
    assert.ok(primaryRuns > 0, 'the primary took the queries');
    assert.equal((await call('/ready')).status, 200, 'a replica down does not make the service unready');
  });
});
