/**
 * SIGTERM (docs/API.md, "Starting and stopping"): the real service (`node --import tsx src/main.ts`, its own process, a fresh database)
 * gets SIGTERM while requests are in flight — a query running in Postgres and an ingest body
 * still being uploaded. Both must complete with 200 (and the batch be stored), new connections
 * must be refused from the signal on, and the process must exit 0. A request that never ends
 * holds the stop up only until SHUTDOWN_TIMEOUT_MS: then the process exits 1 saying so.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { createEmptyDatabase } from '../support/db.js';
import { report, sleep, startService, type ServiceProcess } from './support.js';

const KEY = 'hardening-sigterm-admin-key-0123456789';
const ROWS = 240;

function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(2000, () => (socket.destroy(), resolve('timeout')));
    socket.once('connect', () => (socket.destroy(), resolve('connected')));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('hardening: SIGTERM', function () {
  this.timeout(60_000);
  let svc: ServiceProcess | undefined;
  let pool: pg.Pool | undefined;

  after(async () => {
    if (process.env.HARDENING_LOG) process.stdout.write(svc?.output() ?? '');
    await svc?.kill();
    await pool?.end();
  });

  it('when SIGTERM arrives during a slow query and an upload, then both complete, new connections are refused, and the process exits 0', async () => {
    const { url } = await createEmptyDatabase('lq_hard_sigterm');
    svc = await startService({
      DATABASE_URL: url,
      ADMIN_API_KEY: KEY,
      QUERY_TIMEOUT_MS: '60000',
      LOG_LEVEL: process.env.HARDENING_LOG ?? 'info',
    });
    const s = svc;
    const tag = `sigterm${Date.now().toString(36)}`;
    const post = await fetch(`${s.base}/api/logs?source_name=cloudflare.logs.prod`, {
      method: 'POST',
      headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify(Array.from({ length: ROWS }, (_, i) => ({ id: `${tag}-${i}`, project: tag, event_message: 'x' }))),
    });
    assert.equal(post.status, 200);

    // A query that runs a second or two in Postgres (ROWS³ combinations).
    const slowSql = 'select count(*) as n from edge_logs a cross join edge_logs b cross join edge_logs c';
    // Warm the sandbox path first (its first use loads the SQL validator and blocks the event loop for a moment).
    await fetch(`${s.base}/api/endpoints/query/logs.all?project=${tag}&sql=${encodeURIComponent('select count(*) as n from edge_logs')}`, {
      headers: { 'X-API-KEY': KEY },
    });
    const queryStarted = performance.now();
    const slowQuery = fetch(`${s.base}/api/endpoints/query/logs.all?project=${tag}&sql=${encodeURIComponent(slowSql)}`, {
      headers: { 'X-API-KEY': KEY },
    }).then(
      async (r) => ({ status: r.status, text: await r.text(), ms: performance.now() - queryStarted }),
      (err: Error) => ({ status: 0, text: err.message, ms: performance.now() - queryStarted }),
    );

    // An upload in progress: headers and half the body before the signal, the rest after it.
    // `Expect: 100-continue` makes the server confirm it has the request (a connection still in
    // the listen backlog at the signal would be reset, like any new one).
    const uploadId = `${tag}-upload`;
    const body = Buffer.from(
      JSON.stringify({ batch: Array.from({ length: 50 }, (_, i) => ({ id: `${uploadId}-${i}`, project: tag, event_message: 'upload' })) }),
    );
    let received!: () => void;
    const uploadReceived = new Promise<void>((resolve) => (received = resolve));
    let sendRest!: () => void;
    const restMayGo = new Promise<void>((resolve) => (sendRest = resolve));
    const upload = new Promise<{ status: number; text: string; connection: string | undefined }>((resolve) => {
      const req = http.request(
        `${s.base}/api/logs?source_name=cloudflare.logs.prod`,
        {
          method: 'POST',
          agent: false,
          headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json', 'Content-Length': String(body.length), Expect: '100-continue' },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text, connection: res.headers.connection }));
        },
      );
      req.on('error', (err) => resolve({ status: 0, text: err.message, connection: undefined }));
      req.on('continue', () => {
        req.write(body.subarray(0, body.length >> 1), () => received());
        void restMayGo.then(() => req.end(body.subarray(body.length >> 1)));
      });
      req.flushHeaders();
    });
    // An idle keep-alive connection must not hold the shutdown up.
    const idle = net.connect(s.port, '127.0.0.1');
    await new Promise((resolve) => idle.once('connect', resolve));
    idle.on('error', () => undefined);

    // The upload is half sent (and the server has its request); the slow query was sent before it.
    await uploadReceived;
    await sleep(100);
    assert.equal(s.child.exitCode, null);
    const signalledAt = performance.now();
    s.child.kill('SIGTERM');
    setTimeout(sendRest, 500);
    // The handler runs when the event loop gets to it, which a loaded machine delays: poll until new
    // connections are refused, and check that happened while the process was still finishing its
    // in-flight work, not because it had exited (each probe that still connects is closed at once,
    // so it does not hold the shutdown up).
    let afterSignal = 'connected';
    let refusedAfterMs = NaN;
    let refusedBeforeExit = false;
    while (s.child.exitCode === null) {
      afterSignal = await tryConnect(s.port);
      if (afterSignal !== 'connected') {
        refusedAfterMs = performance.now() - signalledAt;
        refusedBeforeExit = s.child.exitCode === null;
        break;
      }
      await sleep(25);
    }
    const [q, u] = await Promise.all([slowQuery, upload]);
    const exit = await s.exited;
    const exitMs = performance.now() - signalledAt;
    report('sigterm', {
      slowQuery: { status: q.status, ms: Math.round(q.ms), answeredMsAfterSignal: Math.round(queryStarted + q.ms - signalledAt) },
      upload: { status: u.status },
      newConnectionAfterSignal: afterSignal,
      refusedAfterMs: Math.round(refusedAfterMs),
      uploadConnectionHeader: u.connection,
      exitCode: exit.code,
      exitMsAfterSignal: Math.round(exitMs),
    });

    assert.equal(q.status, 200, q.text);
    assert.deepEqual(JSON.parse(q.text), { result: [{ n: ROWS ** 3 }] });
    assert.ok(
      queryStarted + q.ms > signalledAt + 50,
      `the query was still running at the signal (answered ${Math.round(queryStarted + q.ms - signalledAt)} ms after it)`,
    );
    assert.equal(u.status, 200, u.text);
    assert.deepEqual(JSON.parse(u.text), { message: 'Logged!', count: 50 });
    // A connection that reaches the listening socket in the instant it closes is reset rather than refused: both refuse it.
    assert.ok(
      ['ECONNREFUSED', 'ECONNRESET'].includes(String(afterSignal)) && refusedBeforeExit,
      `new connections are refused once SIGTERM arrived, before the process exits (${afterSignal})`,
    );
    // Code 0: the in-flight work finished within SHUTDOWN_TIMEOUT_MS (past it the process exits 1: the test below).
    assert.deepEqual(exit, { code: 0, signal: null }, `exited ${Math.round(exitMs)} ms after the signal`);
    assert.match(s.output(), /stopping/);

    pool = new pg.Pool({ connectionString: url, max: 1 });
    const p = pool;
    const { rows } = await p.query('SELECT count(*)::int AS n FROM logs.cloudflare_logs_prod WHERE id LIKE $1', [`${uploadId}-%`]);
    assert.equal(rows[0].n, 50, 'the batch uploaded across the signal is stored');
    const { rows: left } = await p.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'logquery%'",
    );
    assert.equal(left[0].n, 0, 'the pools were closed');
    idle.destroy();
  });

  it('when a request is still in flight at SHUTDOWN_TIMEOUT_MS, then the process exits 1 with a line naming what was still running', async () => {
    const { url } = await createEmptyDatabase('lq_hard_deadline');
    const late = await startService({ DATABASE_URL: url, ADMIN_API_KEY: KEY, SHUTDOWN_TIMEOUT_MS: '300', LOG_LEVEL: 'info' });
    try {
      // An upload whose body never finishes.
      const body = Buffer.from(JSON.stringify({ batch: [{ event_message: 'never finished' }] }));
      const req = http.request(`${late.base}/api/logs?source_name=cloudflare.logs.prod`, {
        method: 'POST',
        agent: false,
        headers: {
          'X-API-KEY': KEY,
          'Content-Type': 'application/json',
          'Content-Length': String(body.length * 2),
          Expect: '100-continue',
        },
      });
      req.on('error', () => undefined);
      const sent = new Promise<void>((resolve) => req.on('continue', () => req.write(body, () => resolve())));
      req.flushHeaders();
      await sent;
      await sleep(100);
      late.child.kill('SIGTERM');
      assert.deepEqual(await late.exited, { code: 1, signal: null });
      const deadlineLine = late
        .output()
        .split('\n')
        .find((l) => l.includes('not done within 300 ms'));
      assert.ok(deadlineLine, late.output().slice(-2000));
      assert.equal(JSON.parse(deadlineLine).step, 'in-flight requests');
      req.destroy();
    } finally {
      await late.kill();
    }
  });
});
