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

describe('fair scheduling of uncached queries, default limits', function () {
  this.timeout(600_000);
  const tag = `fs${Date.now().toString(36)}`;
  let ctx: AppContext;
  let server: http.Server;
  let base: string;
  const lone = generateKey();
  const flood = generateKey();
  const quiet = generateKey();

  before(async () => {
    const { url } = await testDatabase();
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
  const get = (path: string, key: string) => fetch(base + path, { headers: { 'X-API-KEY': key } });

  it('when a key alone sends a burst of 12 uncached queries, then all 12 are answered', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => get(slow(`lone-${i}`), lone)));
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(12).fill(200),
    );
    for (const r of answers) assert.notEqual(r.headers.get('x-cache'), 'HIT', 'each ran on the database');
  });

  it('when another key has a backlog of 50 queued, then a quiet key’s query starts before the backlog drains, and the backlog still completes', async () => {
    let floodDone = 0;
    const backlog = Array.from({ length: 50 }, (_, i) =>
      get(slow(`flood-${i}`), flood).then((r) => {
        floodDone += 1;
        return r.status;
      }),
    );
    // Let the backlog fill the slots and queue.
    await new Promise((r) => setTimeout(r, 200));
    const before = floodDone;
    const answer = await get(slow('quiet'), quiet);
    const passedMeanwhile = floodDone - before;
    assert.equal(answer.status, 200);
    // Two slots: the quiet query takes the first one to free; the flood's other slot may finish meanwhile.
    assert.ok(passedMeanwhile <= 4, `${passedMeanwhile} of the backlog finished while the quiet key's one query waited and ran`);
    assert.ok(floodDone < 50, 'the backlog had not drained');
    assert.deepEqual(await Promise.all(backlog), Array(50).fill(200), 'the flooding key is slowed, not starved');
  });
});
