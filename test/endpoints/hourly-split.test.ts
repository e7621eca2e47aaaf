/**
 * The hourly split (src/query/hourlySplit.ts, src/sql/postgres/decompose.ts): for Studio's report
 * queries (test/compat/studio/queries.json: API, realtime, auth, storage), the rows through cached
 * hourly partials and a merge equal the rows of the query run whole, on real Postgres and Redis:
 * with a cold cache, a warm one, and a window not on hour boundaries. A late event into a cached
 * hour, retention dropping a day, and a source deleted and created again change the answer exactly
 * as they change the whole query's; shapes that do not decompose, and a Redis that does not answer,
 * run whole. With the background (src/query/hourlyBackground.ts), a load that finds most hours
 * missing runs whole and the background keeps them afterwards, and each hour that closes is
 * computed for the shapes loads asked for. Through HTTP, `logs.all` uses it, a first load answers
 * exactly as the whole query, and ingest bumps the write version of the hour it wrote into.
 *
 * float8 columns (avg, and sums cast to float8) are compared to a relative 1e-9: partial sums added
 * up hour by hour may differ in the last bits from a one-pass sum (docs/ARCHITECTURE.md, "Hourly
 * partials"). Every other column must be equal as text.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createClient } from 'redis';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { createContext, type AppContext } from '../../src/context.js';
import { generateKey } from '../../src/auth/keys.js';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import { LogWriter } from '../../src/ingest/write.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { executeReadOnly, type QueryRun } from '../../src/query/execute.js';
import { HourlyStore } from '../../src/query/hourlyStore.js';
import { FILLS_PER_TICK, WARM_AGE_MS } from '../../src/query/reportWarmup.js';
import { catalogSourceOf, HourlyBackground } from '../../src/query/hourlyBackground.js';
import { CLOSED_AFTER_MS, HOUR_MS, planOf, runSplit, type Runner, type SplitStats } from '../../src/query/hourlySplit.js';
import { SourceService } from '../../src/sources/service.js';
import { SourceUpkeep } from '../../src/upkeep/sourceUpkeep.js';
import { partitionName } from '../../src/storage/logTables.js';
import { initTranslator, translateQuery, type Translation } from '../../src/sql/index.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';
import { createEmptyDatabase, testConfig, testContext } from '../support/db.js';
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

/** Count of one `logquery_hourly_events_total` event. */
async function hourlyEvents(metrics: Metrics, event: string): Promise<number> {
  return (await metrics.hourlyEvents.get()).values.find((v) => v.labels.event === event)?.value ?? 0;
}

/** JSON rows in a canonical order, floats to 9 significant digits (a split sum may differ from a one-pass one in the last bits). */
function sameFloats(rows: Array<Record<string, unknown>>): string[] {
  const round = (v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v);
  return rows.map((r) => JSON.stringify(Object.entries(r).map(([k, v]) => [k, round(v)]))).sort();
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

  /** A source of its own (its own catalog, writer and upkeep reporting to this test's store), and a grouped count over its rows in a window. */
  async function ownSource(label: string, id?: string) {
    const service = new SourceService(ctx.db, 30, async () => [], undefined, store);
    const name = `hourly.${label}.${project}`;
    const source = await service.create({ ...(id && { id }), name });
    const own = new LogWriter(ctx.db.pool, service, undefined, ctx.db.capabilities, store);
    const put = async (list: Array<{ at: number; message: string }>) => {
      const current = await service.get(name);
      const batch = normaliseEvents(
        list.map(({ at, message }, i) => ({ id: `${label}-${at}-${i}`, timestamp: new Date(at).toISOString(), event_message: message })),
        { nowMs: Date.now(), retentionDays: current.retention_days },
      );
      assert.deepEqual(batch.errors, []);
      await own.write(current, batch.rows, batch.fields);
      await service.reload();
    };
    const query = () =>
      translateQuery({
        query: `select t.event_message as m, count(t.id) as n from \`${name}\` t where t.timestamp > @iso_timestamp_start and t.timestamp <= @iso_timestamp_end group by m`,
        sources: service.lookup,
        maxRows: 1000,
      });
    const sourceOf = catalogSourceOf(service);
    return { service, name, source, put, query, sourceOf };
  }
  const total = (r: QueryRun) => r.rows.reduce((n, row) => n + Number(row[1]), 0);

  it('retention dropping a day of kept hours: the next load counts exactly the rows left, as the whole query', async () => {
    const { service, name, source, put, query, sourceOf } = await ownSource('retention');
    const DAY = 24 * HOUR_MS;
    // Rows three days ago (their day goes at a retention of 1 day) and in the last hours (they stay).
    await put([
      ...Array.from({ length: 12 }, (_, i) => ({ at: now - 3 * DAY + i * 600_000, message: `old-${i % 3}` })),
      ...Array.from({ length: 5 }, (_, i) => ({ at: now - 5 * HOUR_MS + i * 600_000, message: `new-${i % 2}` })),
    ]);
    const t = query();
    assert.ok(planOf(t), 'the query splits');
    const values = valuesOf(t, now - 4 * DAY, now + 60_000);
    const options = { sourceOf };
    assertSameRows((await runSplit(t, values, run, store, now, stats(), options))!, await run(t.sql, values), 'before the drop');
    const kept = stats();
    await runSplit(t, values, run, store, now, kept, options);
    assert.equal(kept.computedHours, 0, 'every closed hour is kept');

    await service.update(name, { retention_days: 1 });
    const { dropped } = await new SourceUpkeep(ctx.db, service, store).runPartitionUpkeep(now);
    assert.ok(dropped.includes(partitionName(source.table_name, Math.floor((now - 3 * DAY) / DAY) * DAY)), JSON.stringify(dropped));

    const after = stats();
    const split = (await runSplit(t, values, run, store, now, after, options))!;
    const whole = await run(t.sql, values);
    assertSameRows(split, whole, 'after the drop');
    assert.equal(total(split), 5, 'the dropped rows are not counted');
    assert.ok(after.computedHours >= 24, `the dropped day's hours are computed again: ${JSON.stringify(after)}`);
  });

  it('a source deleted and created again under the same table name and id reads none of the hours kept for the first', async () => {
    const id = randomUUID();
    const first = await ownSource('deleted', id);
    await first.put(Array.from({ length: 9 }, (_, i) => ({ at: now - (3 + i) * HOUR_MS, message: `first-${i % 3}` })));
    const t = first.query();
    const values = valuesOf(t, now - 26 * HOUR_MS, now + 60_000);
    await runSplit(t, values, run, store, now, stats(), { sourceOf: first.sourceOf });
    const kept = stats();
    await runSplit(t, values, run, store, now, kept, { sourceOf: first.sourceOf });
    assert.equal(kept.computedHours, 0, 'every closed hour is kept');

    await first.service.delete(first.name);
    const again = await ownSource('deleted', id);
    assert.equal(again.source.table_name, first.source.table_name);
    await again.put(Array.from({ length: 4 }, (_, i) => ({ at: now - (4 + i) * HOUR_MS, message: `again-${i % 2}` })));
    const t2 = again.query();
    assert.equal(planOf(t2)!.partialSql, planOf(t)!.partialSql, 'the same partial query: only the versions tell the hours apart');
    const split = (await runSplit(t2, values, run, store, now, stats(), { sourceOf: again.sourceOf }))!;
    assertSameRows(split, await run(t2.sql, values), 'after the source was created again');
    assert.equal(total(split), 4);
  });

  it('with the background: a load finding most hours missing runs whole and they are kept afterwards; each hour that closes is computed for the shapes asked for', async () => {
    // Not in the first minute of an hour (before CLOSED_AFTER_MS its previous hour is not closed yet),
    // so that an hour later exactly one more hour has closed.
    let clock = Math.max(now, Math.floor(now / HOUR_MS) * HOUR_MS + 2 * CLOSED_AFTER_MS);
    const start = clock;
    const metrics = createMetrics();
    const sourceOf = catalogSourceOf(ctx.sources);
    const background = new HourlyBackground(store, { run, sourceOf, metrics, now: () => clock });
    const options = { sourceOf, background };
    const t = translate(corpus.find((q) => q.id === 'reports/api/topSlowRoutes')!.sql);
    // The window reaches past the hour now open, as a report's "last 24 hours" does an hour later.
    const values = valuesOf(t, now - 26 * HOUR_MS, now + 2 * HOUR_MS);
    const whole = await run(t.sql, values);

    const cold = stats();
    assert.equal(await runSplit(t, values, run, store, clock, cold, options), undefined, 'nothing kept for this shape: run whole');
    assert.equal(cold.coldLoads, 1);
    await background.idle();
    // The closed hours of the window (hours ending CLOSED_AFTER_MS before the clock).
    const closedUntil = Math.min(now + 2 * HOUR_MS, clock - CLOSED_AFTER_MS);
    let expected = 0;
    for (let h = Math.floor((now - 26 * HOUR_MS) / HOUR_MS) * HOUR_MS + HOUR_MS; h + HOUR_MS <= closedUntil; h += HOUR_MS) expected++;
    assert.equal(await hourlyEvents(metrics, 'hours_computed'), expected, 'the background kept every closed hour of the window');
    const warm = stats();
    assertSameRows((await runSplit(t, values, run, store, clock, warm, options))!, whole, 'after the background');
    assert.equal(warm.computedHours, 0, 'every closed hour is read');

    // The hour open at `now` closes: the tick computes it, and only it.
    clock = start + HOUR_MS;
    const computed = await hourlyEvents(metrics, 'hours_computed');
    await background.tick();
    assert.equal((await hourlyEvents(metrics, 'hours_computed')) - computed, 1, 'the hour that closed');
    const later = stats();
    assertSameRows((await runSplit(t, values, run, store, clock, later, options))!, whole, 'an hour later');
    assert.equal(later.computedHours, 0, 'the next load finds every closed hour kept');
    assert.equal(later.cachedHours, warm.cachedHours + 1);
    background.close();
  });

  it("is on by default with REDIS_URL, off with HOURLY_SPLIT=false, and off without Redis; Studio's reports kept warm unless HOURLY_WARM_REPORTS=false", () => {
    assert.equal(testConfig(ctx.db.url, { REDIS_URL }).hourlySplit, true);
    assert.equal(testConfig(ctx.db.url, { REDIS_URL, HOURLY_SPLIT: 'false' }).hourlySplit, false);
    assert.equal(testConfig(ctx.db.url, { REDIS_URL }).hourlyWarmReports, true, "Studio's reports are kept warm by default");
    assert.equal(testConfig(ctx.db.url, { REDIS_URL, HOURLY_WARM_REPORTS: 'false' }).hourlyWarmReports, false);
    assert.equal(ctx.config.redisUrl, undefined);
    assert.equal(ctx.hourly, undefined, 'without Redis nothing is split');
  });

  it('through HTTP, a first load with nothing kept answers exactly as the whole query; the background keeps its hours and the next load reads them', async () => {
    const own = await createContext(testConfig(ctx.db.url, { REDIS_URL }), createLogger('silent')); // on by default
    try {
      const key = generateKey();
      await own.keys.create(`hourly-cold-${project}`, key, ['query']);
      const [splitApp, wholeApp] = [await createApp(own), await createApp(ctx)];
      const q = corpus.find((x) => x.id === 'reports/api/topSlowRoutes')!;
      const ask = async (app: typeof splitApp, endMs: number) => {
        const res = await request(app)
          .get('/api/endpoints/query/logs.all')
          .query({
            project,
            sql: q.sql,
            iso_timestamp_start: new Date(endMs - 26 * HOUR_MS).toISOString(),
            iso_timestamp_end: new Date(endMs).toISOString(),
          })
          .set('X-API-KEY', key);
        assert.equal(res.status, 200, res.text);
        return res.body.result as Array<Record<string, unknown>>;
      };
      const first = await ask(splitApp, now);
      assert.deepEqual(first, await ask(wholeApp, now), 'the first load is the whole query’s answer');
      assert.equal(await hourlyEvents(own.metrics, 'cold'), 1);
      await own.hourlyBackground!.idle();
      assert.ok((await hourlyEvents(own.metrics, 'hours_computed')) >= 24);
      // Another window end (1 s later) so the endpoint's result cache does not answer.
      const second = await ask(splitApp, now + 1000);
      assert.equal(await hourlyEvents(own.metrics, 'split'), 1, 'the next load reads the kept hours');
      const whole = await ask(wholeApp, now + 1000);
      assert.equal(second.length, whole.length);
      second.forEach((row, i) => {
        const { avg, ...rest } = row;
        const { avg: wholeAvg, ...wholeRest } = whole[i];
        assert.deepEqual(rest, wholeRest, `row ${i}`);
        assert.ok(
          Math.abs(Number(avg) - Number(wholeAvg)) <= 1e-9 * Math.max(1, Math.abs(Number(wholeAvg))),
          `row ${i}: ${String(avg)} vs ${String(wholeAvg)}`,
        );
      });
    } finally {
      await own.close();
    }
  });

  it("with Studio's reports kept warm, the first load of the 7-day API report reads every closed hour kept and answers as the whole query; the warm shapes rank behind the ones loads asked for", async () => {
    // A database of its own: the warm-up keeps the busiest projects of a table (by its newest events), here this one alone.
    const { url } = await createEmptyDatabase('lq_test_warm');
    const [warm, whole] = [
      await createContext(testConfig(url, { REDIS_URL }), createLogger('silent')),
      await createContext(testConfig(url, { HOURLY_SPLIT: 'false' }), createLogger('silent')),
    ];
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    const ours: string[] = [];
    try {
      const key = generateKey();
      await warm.keys.create(`hourly-warm-${project}`, key, ['query']);
      const { edge, auth } = events(project, now);
      const ownWriter = new LogWriter(warm.db.pool, warm.sources, undefined, warm.db.capabilities, warm.hourly);
      for (const [name, list] of [
        ['cloudflare.logs.prod', edge],
        ['gotrue.logs.prod', auth],
      ] as const) {
        const source = await warm.sources.get(name);
        const batch = normaliseEvents(list, { nowMs: Date.now(), retentionDays: source.retention_days });
        await ownWriter.write(source, batch.rows, batch.fields);
      }
      await warm.sources.reload();
      await whole.sources.reload();
      const [warmApp, wholeApp] = [await createApp(warm), await createApp(whole)];
      // One tick registers the report shapes of the project and fills the last 7 days of the first
      // FILLS_PER_TICK of them, the API report's 8. (Another process's tick may hold the lock for a moment.)
      const tickedAt = Date.now();
      for (let i = 0; i < 10 && (await hourlyEvents(warm.metrics, 'hours_computed')) === 0; i++) {
        if (i) await new Promise((r) => setTimeout(r, 500));
        await warm.hourlyBackground!.tick();
      }
      assert.equal(FILLS_PER_TICK, 8);
      assert.ok((await hourlyEvents(warm.metrics, 'hours_computed')) >= 8 * 7 * 24, "the 8 API queries' 7 days were computed");
      const api = corpus.filter((q) => /^reports\/api\/[A-Za-z]+$/.test(q.id));
      assert.equal(api.length, 8);
      const end = Date.now();
      const ask = async (app: typeof warmApp, sql: string) => {
        const res = await request(app)
          .get('/api/endpoints/query/logs.all')
          .query({
            project,
            sql,
            iso_timestamp_start: new Date(end - 7 * 24 * HOUR_MS).toISOString(),
            iso_timestamp_end: new Date(end).toISOString(),
          })
          .set('X-API-KEY', key);
        assert.equal(res.status, 200, res.text);
        return res.body.result as Array<Record<string, unknown>>;
      };
      for (const q of api) assert.deepEqual(sameFloats(await ask(warmApp, q.sql)), sameFloats(await ask(wholeApp, q.sql)), q.id);
      assert.equal(await hourlyEvents(warm.metrics, 'cold'), 0, 'no load found its hours missing');
      assert.equal(await hourlyEvents(warm.metrics, 'split'), 8, 'all 8 read kept hours');
      // The registry (shared by every process of the install): this project's shapes, the 8 the
      // loads asked for at their time, the rest of the warm ones as if asked for 6 days ago.
      const ids = new Set(warm.sources.list().map((s) => s.id));
      for (const hash of await redis.zRange('lq:hs:shapes', 0, -1)) {
        const body = await redis.get(`lq:hs:shape:${hash}`);
        const shape = body && (JSON.parse(body) as { sourceId: string; values: unknown[] });
        if (shape && ids.has(shape.sourceId) && shape.values.includes(project)) ours.push(hash);
      }
      const scores = await Promise.all(ours.map((h) => redis.zScore('lq:hs:shapes', h)));
      assert.equal(scores.filter((t) => t! >= end).length, 8, 'the shapes the loads asked for, at their time');
      const warmOnly = scores.filter((t) => t! < end);
      assert.ok(warmOnly.length >= 20, `the other report queries are warm too (${warmOnly.length})`);
      for (const t of warmOnly) assert.ok(Math.abs(t! - (tickedAt - WARM_AGE_MS)) < 60_000, 'ranked as asked for 6 days ago');
    } finally {
      for (const hash of ours) {
        await redis.zRem('lq:hs:shapes', hash);
        await redis.del(`lq:hs:shape:${hash}`);
        for await (const k of redis.scanIterator({ MATCH: `lq:hp:${hash}:*`, COUNT: 1000 })) if (k.length) await redis.del(k);
      }
      await redis.quit();
      await warm.close();
      await whole.close();
    }
  });

  it("a registration at a warm shape's rank never lowers the rank a load gave the shape (ZADD GT)", async () => {
    const zset = `${namespace}hs:shapes`;
    const redis = createClient({ url: REDIS_URL });
    await redis.connect();
    try {
      await store.registerShape('asked', '{}', 2000);
      await store.registerShape('asked', '{}', 1000, { raiseOnly: true });
      assert.equal(await redis.zScore(zset, 'asked'), 2000);
      await store.registerShape('warm', '{}', 1000, { raiseOnly: true });
      assert.equal(await redis.zScore(zset, 'warm'), 1000, 'a new shape takes the rank given');
      await store.registerShape('warm', '{}', 3000);
      assert.equal(await redis.zScore(zset, 'warm'), 3000, 'a load raises it');
    } finally {
      await redis.quit();
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
      await own.hourlyBackground!.idle(); // a first load runs whole; its hours are kept in the background
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
