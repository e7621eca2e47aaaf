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
import { insertEvents, testConfig, testDatabase } from '../support/db.js';
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
    const { url } = await testDatabase();
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
    );
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await ctx.close();
  });

  /** An uncached query of about a tenth of a second (2.7 M combinations), different for each `i`. */
  const slow = (i: string) =>
    `/api/endpoints/query/logs.all?project=${tag}&sql=${encodeURIComponent(
      `select count(*) as n from edge_logs a cross join edge_logs b cross join (select id from edge_logs limit 30) c where a.id != '${i}'`,
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
    // The order is read from the database, not raced against the clock: the backlog's table is held
    // locked while the quiet query joins the queue, so the two slots stay taken by the backlog's
    // first two queries however slow the machine; the quiet query reads another table, held until
    // it has started, so its start is seen for certain (test/support/heldTables.ts).
    const edge = (await ctx.sources.get('cloudflare.logs.prod')).table_name;
    const auth = (await ctx.sources.get('gotrue.logs.prod')).table_name;
    const starts = await QueryStarts.watch(databaseUrl, {
      flood: (q) => q.includes(edge) && /cross join/i.test(q),
      quiet: (q) => q.includes(auth),
    });
    const held = [await holdTable(databaseUrl, edge), await holdTable(databaseUrl, auth)];
    try {
      const backlog = Array.from({ length: 50 }, (_, i) => get(slow(`flood-${i}`), flood).then((r) => r.status));
      await waitFor(
        'the backlog queued behind its first two',
        async () => ctx.limiter.load,
        (l) => l.busy === 2 && l.waiting === 48,
      );
      const answer = get(quietQuery, quiet);
      await waitFor(
        'the quiet query queued too',
        async () => ctx.limiter.load,
        (l) => l.waiting === 49,
      );
      const firstTwo = await waitFor(
        'the backlog’s first two waiting on the database',
        async () => starts.started.filter((q) => q.kind === 'flood'),
        (qs) => qs.length >= 2 && qs.every((q) => q.waitedOnLock),
      );
      await held[0].release(); // the backlog's first two run and free their slots
      const quietStart = await waitFor(
        'the quiet query started',
        async () => starts.started.find((q) => q.kind === 'quiet'),
        (q) => q !== undefined,
        60_000,
      );
      const before = starts.started.filter((q) => q.kind === 'flood' && q.startedUs < quietStart!.startedUs);
      await held[1].release();
      assert.equal((await answer).status, 200);
      assert.equal(firstTwo.length, 2, 'the backlog held both slots while the quiet query queued');
      const id = (q: { pid: number; startedUs: number }) => `${q.pid}@${q.startedUs}`;
      assert.deepEqual(before.map(id), firstTwo.map(id), 'no query of the backlog started between the quiet query queueing and starting');
      assert.deepEqual(await Promise.all(backlog), Array(50).fill(200), 'the flooding key is slowed, not starved');
    } finally {
      for (const h of held) await h.release();
      await starts.stop();
    }
  });
});
