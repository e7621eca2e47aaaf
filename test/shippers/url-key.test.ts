/**
 * The API key as the `api_key` URL parameter (the self-hosted stack's shipper puts it there), for
 * ingest and queries, the GET fast path included; headers win when both are sent. The key must
 * never show: not in the service's own log lines, not in a metric, not in an error message, not
 * in a cache key. A service instance of its own logs at trace level into memory, and everything
 * it wrote is searched for every key used.
 *
 * Also here, because its log is captured: a catalog reload failing after COMMIT is logged and
 * retried, and the batch is still acknowledged (a 5xx would make the shipper store it twice).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createClient } from 'redis';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createHttpServer } from '../../src/http/server.js';
import type { PipelineStep } from '../../src/http/pipeline.js';
import { SHARED_REDIS_URL } from '../cache/support.js';
import { testConfig, testDatabase } from '../support/db.js';
import { waitFor } from '../support/wait.js';
import { listenLocally } from '../support/net.js';

describe('the api_key URL parameter, and keys never shown', function () {
  this.timeout(60_000);
  const lines: string[] = [];
  let ctx: AppContext;
  let base: string;
  let close: () => Promise<void>;
  const keys = { ingest: generateKey(), query: generateKey(), admin: generateKey() };
  const unknown = `lq_unknown_${generateKey()}`;
  const SOURCE = 'cloudflare.logs.prod';
  const tag = `urlkey${Date.now().toString(36)}`;
  /** Per answered request, in order: true when Express handled it. */
  const answered: boolean[] = [];

  before(async () => {
    const { url } = await testDatabase();
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    ctx = await createContext(testConfig(url, { REDIS_URL: SHARED_REDIS_URL, LOG_LEVEL: 'trace' }), pino({ level: 'trace' }, sink));
    await ctx.keys.create(`${tag}-ingest`, keys.ingest, ['ingest']);
    await ctx.keys.create(`${tag}-query`, keys.query, ['query']);
    await ctx.keys.create(`${tag}-admin`, keys.admin, ['admin']);
    // Records, per answered request, whether Express had it (it gives each request a prototype with
    // `app`; requests answered by the fast path before Express never get one).
    const viaExpress: PipelineStep = {
      name: 'test: via Express',
      run: ({ req, res }) => void res.once('finish', () => answered.push((req as { app?: unknown }).app !== undefined)),
    };
    const server = createHttpServer(await createApp(ctx, { steps: [viaExpress] }));
    ({ base } = await listenLocally(server));
    close = async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await ctx.close();
    };
  });
  after(() => close());

  const ingest = (query: string, headers: Record<string, string> = {}, body: unknown = [{ project: tag, event_message: 'via url key' }]) =>
    fetch(`${base}/api/logs?source_name=${SOURCE}&${query}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
    });
  const logsAll = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/endpoints/query/logs.all?project=${tag}&${query}`, { headers });
  /** A caching endpoint (logs.all is not cached). */
  const usage = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/endpoints/query/usage.api-counts?interval=daily&project=${tag}&${query}`, { headers });

  it('when the ingest key is only in the URL (as Vector sends it), then the events are stored', async () => {
    const res = await ingest(`api_key=${keys.ingest}`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { message: 'Logged!', count: 1 });
  });

  it('when both are sent, then the header wins: a good header with a bad URL key passes, a bad header with a good URL key is 401', async () => {
    assert.equal((await ingest(`api_key=${unknown}`, { 'x-api-key': keys.ingest })).status, 200);
    const refused = await ingest(`api_key=${keys.ingest}`, { authorization: `Bearer ${unknown}` });
    assert.equal(refused.status, 401);
    assert.doesNotMatch(await refused.text(), new RegExp(`${keys.ingest}|${unknown}`));
  });

  it('when a query has its key only in the URL, then it runs; the same query with another key (or a header) is a cache hit, answered by the fast path', async () => {
    const first = await logsAll(`api_key=${keys.query}`);
    assert.equal(first.status, 200);
    const rows = ((await first.json()) as { result: Array<{ event_message: string }> }).result;
    assert.ok(rows.some((r) => r.event_message === 'via url key'));
    assert.equal((await usage(`api_key=${keys.query}`)).status, 200);
    const logged = () => lines.filter((l) => l.includes('"path":"/api/endpoints/query/usage.api-counts"')).length;
    const before = logged();
    const again = await usage(`api_key=${keys.query}`);
    assert.equal(again.headers.get('x-cache'), 'HIT');
    assert.equal(answered.at(-1), false, 'answered by the fast path');
    // The request log line of the pipeline is written for it too (with the path, never the key).
    assert.equal(logged(), before + 1);
    const other = await usage(`api_key=${keys.admin}`);
    assert.equal(other.headers.get('x-cache'), 'HIT', 'the key is part of no cache key');
    const header = await usage('', { 'x-api-key': keys.query });
    assert.equal(header.headers.get('x-cache'), 'HIT');
    assert.equal(await header.text(), await other.text());
  });

  it('when the URL key is unknown or lacks the scope, then 401 or 403, and the answer does not echo it', async () => {
    for (const [res, status] of [
      [await logsAll(`api_key=${unknown}`), 401],
      [await logsAll(`api_key=${keys.ingest}`), 403],
      [await ingest(`api_key=${keys.query}`), 403],
      [await fetch(`${base}/api/endpoints/logs.all/sql?project=x&api_key=${keys.query}`), 403],
    ] as const) {
      assert.equal(res.status, status);
      assert.doesNotMatch(await res.text(), new RegExp(Object.values(keys).join('|') + `|${unknown}`));
    }
    const sql = await fetch(`${base}/api/endpoints/logs.all/sql?project=x&api_key=${keys.admin}`);
    assert.equal(sql.status, 200);
    assert.doesNotMatch(await sql.text(), new RegExp(keys.admin));
  });

  it('when a catalog reload fails after COMMIT, then the batch is still acknowledged (200, stored once), the failure is logged, and the reload is retried', async () => {
    const sources = ctx.sources;
    const reload = sources.reload.bind(sources);
    sources.reload = () => Promise.reject(new Error('catalog unavailable (injected)'));
    let res: Response;
    try {
      res = await ingest(`api_key=${keys.ingest}`, {}, [
        { project: tag, event_message: 'after commit', metadata: { [`${tag}_new_field`]: 1 } },
      ]);
    } finally {
      sources.reload = reload;
    }
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { message: 'Logged!', count: 1 });
    const { rows } = await ctx.db.pool.query(
      `SELECT count(*)::int AS n FROM logs.cloudflare_logs_prod WHERE project = $1 AND event_message = 'after commit'`,
      [tag],
    );
    assert.equal(rows[0].n, 1);
    assert.ok(
      lines.some((l) => /catalog reload after an ingest commit failed/.test(l) && /"level":40/.test(l)),
      'a warning is logged',
    );
    // The retry in the background brings the new field into the catalog.
    await waitFor(
      'the new field in the catalog',
      async () => sources.lookup(SOURCE)?.fields.metadata?.fields?.[`${tag}_new_field`],
      (f) => f !== undefined,
    );
  });

  it('then no key appears in any log line of the service, in /metrics, or in a Redis key', async () => {
    const everyKey = [...Object.values(keys), unknown];
    const log = lines.join('');
    assert.ok(lines.length > 10, `the log was captured (${lines.length} lines)`);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const redis = createClient({ url: SHARED_REDIS_URL });
    await redis.connect();
    const redisKeys: string[] = [];
    for await (const batch of redis.scanIterator({ MATCH: 'lq:*', COUNT: 1000 }))
      redisKeys.push(...(Array.isArray(batch) ? batch : [batch]));
    await redis.quit();
    for (const key of everyKey) {
      assert.ok(!log.includes(key), 'a key is in the service log');
      assert.ok(!metrics.includes(key), 'a key is in /metrics');
      assert.ok(!redisKeys.some((k) => k.includes(key)), 'a key is in a Redis key');
    }
  });
});
