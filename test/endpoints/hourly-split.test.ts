/**
 * The hourly split (src/query/hourlySplit.ts, src/sql/postgres/decompose.ts): for Studio's report
 * queries (test/compat/studio/queries.json: API, realtime, auth, storage), the rows through cached
 * hourly partials and a merge equal the rows of the query run whole, on real Postgres and Redis:
 * with a cold cache, a warm one, and a window not on hour boundaries. A late event into a cached
 * hour changes the answer exactly as it changes the whole query's; shapes that do not decompose,
 * and a Redis that does not answer, run whole. Through HTTP, `logs.all` uses it and ingest bumps
 * the write version of the hour it wrote into.
 *
 * float8 columns (avg, and sums cast to float8) are compared to a relative 1e-9: partial sums added
 * up hour by hour may differ in the last bits from a one-pass sum (docs/ARCHITECTURE.md, "Hourly
 * partials"). Every other column must be equal as text.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createClient } from 'redis';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { createContext, type AppContext } from '../../src/context.js';
import { generateKey } from '../../src/auth/keys.js';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import { LogWriter } from '../../src/ingest/write.js';
import { createLogger } from '../../src/logger.js';
import { executeReadOnly, type QueryRun } from '../../src/query/execute.js';
import { HourlyStore } from '../../src/query/hourlyStore.js';
import { HOUR_MS, planOf, runSplit, type Runner, type SplitStats } from '../../src/query/hourlySplit.js';
import { initTranslator, translateQuery, type Translation } from '../../src/sql/index.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';
import { testConfig, testContext } from '../support/db.js';
import { reproject } from '../support/projects.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
interface StudioQuery {
  id: string;
  sql: string;
}
const corpus = JSON.parse(readFileSync(new URL('../compat/studio/queries.json', import.meta.url), 'utf8')) as StudioQuery[];
const EVENTS = JSON.parse(readFileSync(new URL('../compat/studio/events.json', import.meta.url), 'utf8')) as Record<
  string,
  Array<Record<string, unknown>>
>;
const REPORTS = corpus.filter((q) => /^reports\/(api|auth|storage|shared-api\/realtime)\/[A-Za-z]+$/.test(q.id));

type Event = Record<string, unknown>;
const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

/**
 * Edge events over the last 30 hours: 14 routes, route i with 3(i+1) events (distinct counts, so a
 * top-10 has no tie at its edge), origin times far apart per route (distinct averages), content
 * lengths that make float8 sums; auth events the same way.
 */
function events(project: string, now: number): { edge: Event[]; auth: Event[] } {
  const edge: Event[] = [];
  const auth: Event[] = [];
  const base = EVENTS.edge_logs.map(({ timestamp_offset_seconds: _o, ...e }) => e);
  for (let i = 0; i < 14; i++) {
    for (let j = 0; j < 3 * (i + 1); j++) {
      const e = clone(base[(i + j) % base.length]) as { metadata: { request: Event; response: Event & { headers?: Event } } } & Event;
      const ts = now - ((i * 7919 + j * 104_729) % (30 * 3600)) * 1000 - (j % 997);
      e.id = `${project}-e-${i}-${j}`;
      e.timestamp = new Date(ts).toISOString();
      e.metadata.request.path = `/rest/v1/t${i}`;
      e.metadata.request.method = i % 2 ? 'GET' : 'POST';
      e.metadata.request.search = `?q=${i % 3}`;
      e.metadata.response.status_code = i % 4 === 0 ? 404 + (i % 3) : 200;
      e.metadata.response.origin_time = 1000 * i + (j % 7);
      e.metadata.response.headers = { ...(e.metadata.response.headers ?? {}), content_length: String(1000 + ((i * 37 + j * 11) % 5000)) };
      edge.push(reproject(e, () => project));
    }
  }
  const authBase = EVENTS.auth_logs.map(({ timestamp_offset_seconds: _o, ...e }) => e);
  for (let j = 0; j < 60; j++) {
    const e = clone(authBase[j % authBase.length]);
    e.id = `${project}-a-${j}`;
    e.timestamp = new Date(now - ((j * 104_729) % (30 * 3600)) * 1000).toISOString();
    auth.push(reproject(e, () => project));
  }
  return { edge, auth };
}

/** Same columns and types; the same rows in any order, float8 columns to a relative 1e-9. */
function assertSameRows(split: QueryRun, whole: QueryRun, what: string): void {
  assert.deepEqual(
    split.fields.map((f) => [f.name, f.dataTypeID]),
    whole.fields.map((f) => [f.name, f.dataTypeID]),
    `${what}: columns`,
  );
  const floats = whole.fields.map((f) => f.dataTypeID === 701);
  const key = (r: Array<string | null>) => JSON.stringify(r.map((v, i) => (floats[i] ? null : v)));
  const sort = (rows: Array<Array<string | null>>) => [...rows].sort((a, b) => key(a).localeCompare(key(b)));
  const [a, b] = [sort(split.rows), sort(whole.rows)];
  assert.equal(a.length, b.length, `${what}: row count`);
  a.forEach((row, i) =>
    row.forEach((v, j) => {
      const w = b[i][j];
      if (floats[j] && v !== null && w !== null) {
        assert.ok(
          Math.abs(Number(v) - Number(w)) <= 1e-9 * Math.max(1, Math.abs(Number(w))),
          `${what}: row ${i} column ${j}: ${v} vs ${w}`,
        );
      } else assert.equal(v, w, `${what}: row ${i} column ${j}`);
    }),
  );
}

async function deleteNamespace(namespace: string): Promise<void> {
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  const keys: string[] = [];
  for await (const k of redis.scanIterator({ MATCH: `${namespace}*`, COUNT: 1000 })) keys.push(...(Array.isArray(k) ? k : [k]));
  if (keys.length) await redis.del(keys);
  await redis.quit();
}

describe('hourly split: cached hourly partials merged equal the query run whole', function () {
  this.timeout(60_000);
  const project = `hourly-${Date.now().toString(36)}`;
  const namespace = `lq:test-hourly-${process.pid}-${Date.now().toString(36)}:`;
  const now = Date.now();
  let ctx: AppContext;
  let store: HourlyStore;
  let writer: LogWriter;
  let run: Runner;

  const translate = (sql: string): Translation =>
    translateQuery({ query: LOGS_ALL_SQL, sandboxSql: sql, sources: ctx.sources.lookup, maxRows: 1000 });
  const valuesOf = (t: Translation, start: number, end: number) => {
    const p: Record<string, string> = {
      project,
      iso_timestamp_start: new Date(start).toISOString(),
      iso_timestamp_end: new Date(end).toISOString(),
    };
    return t.parameters.map((n) => p[n] ?? null);
  };
  const write = async (sourceName: string, list: Event[]) => {
    const source = await ctx.sources.get(sourceName);
    const batch = normaliseEvents(list, { nowMs: Date.now(), retentionDays: source.retention_days });
    assert.deepEqual(batch.errors, []);
    await writer.write(source, batch.rows, batch.fields);
  };
  const stats = (): SplitStats => ({ cachedHours: 0, computedHours: 0, pieces: 0 });

  before(async () => {
    await initTranslator();
    ctx = await testContext();
    store = await HourlyStore.open(REDIS_URL, { namespace });
    writer = new LogWriter(ctx.db.pool, ctx.sources, undefined, ctx.db.capabilities, store);
    run = (sql, values, o) =>
      ctx.reads.run((target) =>
        executeReadOnly(target.pool, sql, values, { timeoutMs: 20_000, useReaderRole: target.useReaderRole, workMemKb: o?.workMemKb }),
      );
    const { edge, auth } = events(project, now);
    await write('cloudflare.logs.prod', edge);
    await write('gotrue.logs.prod', auth);
    await ctx.sources.reload();
  });
  after(async () => {
    await store?.close();
    await deleteNamespace(namespace);
  });

  it('decomposes the 8 API report queries and most of the others (the rest run whole)', () => {
    const api = REPORTS.filter((q) => q.id.startsWith('reports/api/'));
    assert.equal(api.length, 8);
    for (const q of api) assert.ok(planOf(translate(q.sql)), q.id);
    const split = REPORTS.filter((q) => planOf(translate(q.sql)));
    assert.ok(split.length >= REPORTS.length - 3, `${split.length} of ${REPORTS.length}`);
  });

  for (const q of REPORTS) {
    it(`${q.id}: cold cache, warm cache and a window off the hour boundaries give the rows of the whole query`, async () => {
      const t = translate(q.sql);
      const plan = planOf(t);
      const end = now + 60_000;
      const start = end - 26 * HOUR_MS;
      const values = valuesOf(t, start, end);
      const whole = await run(t.sql, values);
      const cold = stats();
      const first = await runSplit(t, values, run, store, now, cold);
      if (!plan) {
        assert.equal(first, undefined, 'not decomposed: runs whole');
        return;
      }
      assert.ok(first, 'split');
      assert.ok(cold.computedHours >= 24 && cold.cachedHours === 0, JSON.stringify(cold));
      assertSameRows(first, whole, 'cold');
      const warm = stats();
      assertSameRows((await runSplit(t, values, run, store, now, warm))!, whole, 'warm');
      assert.equal(warm.computedHours, 0);
      assert.ok(warm.cachedHours >= 24, JSON.stringify(warm));
      // Off the hour boundaries at both ends, partly cached: edges computed, the middle read.
      const odd = valuesOf(t, start + 17_123, end - 1_234_567);
      const oddStats = stats();
      assertSameRows((await runSplit(t, odd, run, store, now, oddStats))!, await run(t.sql, odd), 'odd window');
      assert.ok(oddStats.cachedHours > 0, JSON.stringify(oddStats));
    });
  }

  it('a late event into a cached hour changes the answer exactly as it changes the whole query', async () => {
    for (const id of ['reports/api/totalRequests', 'reports/api/topRoutes', 'reports/api/topSlowRoutes']) {
      const t = translate(corpus.find((q) => q.id === id)!.sql);
      const end = now + 60_000;
      const values = valuesOf(t, end - 26 * HOUR_MS, end);
      await runSplit(t, values, run, store, now); // cached (again)
      const before = (await runSplit(t, values, run, store, now))!;
      const late = clone(EVENTS.edge_logs[0]) as Event & { metadata: { request: Event; response: Event } };
      delete late.timestamp_offset_seconds;
      late.id = `${project}-late-${id}`;
      late.timestamp = new Date(Math.floor((now - 5 * HOUR_MS) / HOUR_MS) * HOUR_MS + 1_800_000).toISOString();
      late.metadata.request.path = '/rest/v1/t13';
      late.metadata.request.method = 'GET';
      late.metadata.request.search = '?q=1';
      late.metadata.response.status_code = 200;
      late.metadata.response.origin_time = 999_999;
      await write('cloudflare.logs.prod', [reproject(late, () => project)]);
      const s = stats();
      const after = (await runSplit(t, values, run, store, now, s))!;
      const whole = await run(t.sql, values);
      assertSameRows(after, whole, `${id} after a late event`);
      assert.notDeepEqual(after.rows, before.rows, `${id}: the answer changed`);
      assert.equal(s.computedHours, 1, `${id}: only the late event's hour is computed again`);
    }
  });

  it('shapes that do not decompose, and windows that are not timestamps, run whole', async () => {
    const whole = [
      'select count(distinct t.id) as n from edge_logs t',
      'select t.id, t.timestamp from edge_logs t order by t.timestamp desc limit 5',
      'select count(*) over () as n from edge_logs t',
      'select approx_quantiles(cast(t.timestamp as int64), 100) as q from edge_logs t',
      'select count(*) as n from edge_logs t union all select count(*) as n from edge_logs t',
      'select count(*) as n, current_timestamp() as at from edge_logs t',
    ];
    for (const sql of whole) {
      let t: Translation;
      try {
        t = translate(sql);
      } catch {
        continue; // not even translated: nothing to split
      }
      assert.equal(planOf(t), undefined, sql);
      assert.equal(await runSplit(t, valuesOf(t, now - 26 * HOUR_MS, now), run, store, now), undefined, sql);
    }
    const t = translate('select count(*) as n from edge_logs t');
    assert.ok(planOf(t));
    const empty = t.parameters.map((n) => (n === 'project' ? project : ''));
    assert.equal(await runSplit(t, empty, run, store, now), undefined, 'no window');
    const local = t.parameters.map((n) =>
      n === 'project' ? project : n === 'iso_timestamp_start' ? '2026-01-01 00:00:00' : new Date(now).toISOString(),
    );
    assert.equal(await runSplit(t, local, run, store, now), undefined, 'not an ISO UTC timestamp');
  });

  it('with Redis not answering, the query runs whole', async () => {
    const away = await HourlyStore.open('redis://127.0.0.1:1', { namespace });
    try {
      const t = translate(corpus.find((q) => q.id === 'reports/api/totalRequests')!.sql);
      assert.equal(await runSplit(t, valuesOf(t, now - 26 * HOUR_MS, now), run, away, now), undefined);
    } finally {
      await away.close();
    }
  });

  it('through HTTP, logs.all answers report queries from the split, and ingest bumps the version of the closed hour it wrote into', async () => {
    const own = await createContext(testConfig(ctx.db.url, { REDIS_URL, HOURLY_SPLIT: 'true' }), createLogger('silent'));
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    try {
      const keys = { query: generateKey(), ingest: generateKey() };
      await own.keys.create(`hourly-q-${project}`, keys.query, ['query']);
      await own.keys.create(`hourly-i-${project}`, keys.ingest, ['ingest']);
      const app = await createApp(own);
      const q = corpus.find((x) => x.id === 'reports/api/totalRequests')!;
      const params = (endMs: number) => ({
        project,
        sql: q.sql,
        iso_timestamp_start: new Date(endMs - 26 * HOUR_MS).toISOString(),
        iso_timestamp_end: new Date(endMs).toISOString(),
      });
      const ask = async (endMs: number) => {
        const res = await request(app).get('/api/endpoints/query/logs.all').query(params(endMs)).set('X-API-KEY', keys.query);
        assert.equal(res.status, 200, res.text);
        return res.body.result as Array<{ timestamp: string; count: number }>;
      };
      const partialsBefore = (await redis.keys('lq:hp:*')).length;
      const first = await ask(now);
      assert.ok((await redis.keys('lq:hp:*')).length >= partialsBefore + 24, 'the closed hours were cached');
      const hour = Math.floor((now - 3 * HOUR_MS) / HOUR_MS) * HOUR_MS;
      const versionKey = `lq:hv:logs.cloudflare_logs_prod:${hour}`;
      const version = await redis.get(versionKey);
      assert.ok(version, 'the hour has a write version');
      const late = clone(EVENTS.edge_logs[0]);
      delete late.timestamp_offset_seconds;
      late.id = `${project}-http-late`;
      late.timestamp = new Date(hour + 600_000).toISOString();
      const posted = await request(app)
        .post('/api/logs?source_name=cloudflare.logs.prod')
        .set('X-API-KEY', keys.ingest)
        .send([reproject(late, () => project)]);
      assert.equal(posted.status, 200, posted.text);
      assert.notEqual(await redis.get(versionKey), version, 'ingest bumped the version');
      // Another window end (1 s later) so the endpoint's result cache does not answer.
      const second = await ask(now + 1000);
      const count = (rows: typeof first) => rows.reduce((n, r) => n + Number(r.count), 0);
      assert.equal(count(second), count(first) + 1);
    } finally {
      await redis.quit();
      await own.close();
    }
  });
});
