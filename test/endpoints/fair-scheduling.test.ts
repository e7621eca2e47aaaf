/**
 * The fair scheduler through HTTP, with the default limits (docs/API.md, "Rate limits"): a key
 * alone is never refused for sending a dashboard's burst, and a key with one query runs it at the
 * next free slot even behind another key's backlog. The scheduler's rules in detail are in
 * fair-scheduler.test.ts; three processes on one Redis in test/hardening/processes.test.ts.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { createEmptyDatabase, insertEvents, testConfig } from '../support/db.js';
import { listenLocally } from '../support/net.js';
import { holdTable, QueryStarts } from '../support/heldTables.js';
import { waitFor } from '../support/wait.js';

describe('fair scheduling of uncached queries, default limits', function () {
  this.timeout(600_000);
  const tag = `fs${Date.now().toString(36)}`;
  let ctx: AppContext;
  let server: http.Server;
  let base: string;
  let databaseUrl: string;
  const lone = generateKey();
  const flood = generateKey();
  const quiet = generateKey();

  before(async () => {
    // A database of its own: no other file's context (an alert, a cache warming) reads its tables
    // while the test holds them, and only this test's queries are watched.
    const { url } = await createEmptyDatabase('lq_test');
    databaseUrl = url;
    // The defaults, but for two slots (this machine's default is twice its cores), so queueing is certain, and a
    // time limit long enough for a backlog of 50 to drain on a loaded machine (a query waits up to its limit).
    ctx = await createContext(
      testConfig(url, {
        RATE_LIMIT_PER_SECOND: '100',
        RATE_LIMIT_BURST: '200',
        MAX_CONCURRENT_QUERIES: '0',
        QUERY_SLOTS: '2',
        QUERY_TIMEOUT_MS: '300000',
      }),
      createLogger('silent'),
    );
    server = createHttpServer(await createApp(ctx));
    ({ base } = await listenLocally(server));
    for (const [name, key] of [
      ['fs-lone', lone],
      ['fs-flood', flood],
      ['fs-quiet', quiet],
    ])
      await ctx.keys.create(name, key, ['query']);
    await insertEvents(
      'cloudflare.logs.prod',
      Array.from({ length: 300 }, (_, i) => ({ id: `${tag}-${i}`, project: tag, event_message: 'x' })),
      ctx,
    );
  });
  after(async () => {
    // The database goes with the run's others (test/support/global-hooks.ts).
    if (server) await new Promise((resolve) => server.close(resolve));
    await ctx?.close();
  });

  /** An uncached query of about a tenth of a second on edge_logs (2.7 M combinations; `cte` another table), different for each `i`. */
  const slow = (i: string, cte = 'edge_logs') =>
    `/api/endpoints/query/logs.all?project=${tag}&sql=${encodeURIComponent(
      `select count(*) as n from ${cte} a cross join ${cte} b cross join (select id from ${cte} limit 30) c where a.id != '${i}'`,
    )}`;
  /** The quiet key's query, on another table than the backlog's. */
  const quietQuery = `/api/endpoints/query/logs.all?project=${tag}&sql=${encodeURIComponent('select count(*) as n from auth_logs')}`;
  const get = (path: string, key: string) => fetch(base + path, { headers: { 'X-API-KEY': key } });

  it('when a key alone sends a burst of 12 uncached queries, then all 12 are answered', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => get(slow(`lone-${i}`), lone)));
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(12).fill(200),
    );
    for (const r of answers) assert.notEqual(r.headers.get('x-cache'), 'HIT', 'each ran on the database');
  });

  it('when another key has a backlog of 50 queued, then a quiet key’s query is the next to start, and the backlog still completes', async () => {
    // The order is read from the database, not raced against the clock (test/support/heldTables.ts).
    // Every table the queries read is held locked, so a query given a slot waits inside Postgres,
    // where it is seen, and keeps its slot. The backlog's first query reads edge_logs and its second
    // postgres_logs; the rest queue behind them, then the quiet query (auth_logs). Letting go of
    // postgres_logs frees exactly one slot while nothing else can move: the query seen next is the
    // one the scheduler chose, however slow the machine (a race between the quiet query's start and
    // the backlog's next one would measure connection set-up, not the scheduler's choice).
    const table = async (source: string) => (await ctx.sources.get(source)).table_name;
    const [edge, pgLogs, auth] = [await table('cloudflare.logs.prod'), await table('postgres.logs'), await table('gotrue.logs.prod')];
    const starts = await QueryStarts.watch(databaseUrl, { flood: edge, floodApart: pgLogs, quiet: auth });
    const held = {
      flood: await holdTable(databaseUrl, edge),
      floodApart: await holdTable(databaseUrl, pgLogs),
      quiet: await holdTable(databaseUrl, auth),
    };
    const seen = (kind: string) => async () => starts.started.filter((q) => q.kind === kind && q.waitedOnLock);
    try {
      const backlog = [get(slow('flood-0'), flood).then((r) => r.status)];
      await waitFor('the backlog’s first query waiting on the database', seen('flood'), (qs) => qs.length === 1, 60_000);
      backlog.push(get(slow('flood-1', 'postgres_logs'), flood).then((r) => r.status));
      await waitFor('the backlog’s second query waiting on the database', seen('floodApart'), (qs) => qs.length === 1, 60_000);
      const firstTwo = starts.mark();
      for (let i = 2; i < 50; i++) backlog.push(get(slow(`flood-${i}`), flood).then((r) => r.status));
      await waitFor(
        'the rest of the backlog queued behind its first two',
        async () => ctx.limiter.load,
        (l) => l.busy === 2 && l.waiting === 48,
        60_000,
      );
      const answer = get(quietQuery, quiet);
      await waitFor(
        'the quiet query queued too',
        async () => ctx.limiter.load,
        (l) => l.waiting === 49,
        60_000,
      );
      await held.floodApart.release(); // the backlog's second query runs and frees its slot
      const next = await waitFor(
        'the next query to start',
        async () => starts.startedSince(firstTwo),
        (qs) => qs.length > 0,
        60_000,
      );
      // Its slot and the one the backlog's first query holds are all: no other query can start yet.
      assert.deepEqual(
        next.map((q) => q.kind),
        ['quiet'],
        'the quiet key’s query, queued after the backlog, is given the first slot to free',
      );
      await held.quiet.release();
      await held.flood.release();
      assert.equal((await answer).status, 200);
      assert.deepEqual(await Promise.all(backlog), Array(50).fill(200), 'the flooding key is slowed, not starved');
      assert.ok(starts.most <= 2, `${starts.most} queries at once on the database (QUERY_SLOTS 2)`);
    } finally {
      for (const h of Object.values(held)) await h.release();
      await starts.stop();
    }
  });
});
