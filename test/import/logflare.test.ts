/**
 * `npm run cli -- import logflare`: an install of the original laid out as its migrations lay it
 * out (logflare-schema.sql, original.ts), imported into a new service database: every source,
 * endpoint and access token arrives or is reported with why, every event arrives through the
 * write path, the original is left as it was, and a second run adds nothing.
 * The run killed mid-way is test/hardening/logflare-import-kill.test.ts.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import request from 'supertest';
import type { Listener } from '../../src/http/server.js';
import { runCli } from '../../src/cli.js';
import { createApp } from '../../src/app.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import type { ImportReport } from '../../src/import/logflare/index.js';
import { createEmptyDatabase, testConfig } from '../support/db.js';
import { buildOriginal, CUSTOM_SOURCE, schemaSnapshot, type OriginalInstall } from './original.js';

describe('import logflare: an install of the original, imported', function () {
  this.timeout(120_000);
  let original: OriginalInstall;
  let env: Record<string, string>;
  let before_: string;
  let first: { code: number; report: ImportReport; err: string; progress: string };
  let ctx: AppContext;
  let app: Listener;

  async function importOnce(...extra: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    let progress = '';
    const code = await runCli(['import', 'logflare', '--from', original.url, '--schema', '_analytics', '--batch-size', '100', ...extra], {
      env,
      out: (t) => out.push(t),
      err: (t) => err.push(t),
      progress: { write: (t: string) => (progress += t), isTTY: false },
    });
    return { code, report: (out.length ? JSON.parse(out.join('\n')) : undefined) as ImportReport, err: err.join('\n'), progress };
  }

  async function idsOf(source: string): Promise<string[]> {
    const table = (await ctx.sources.get(source)).table_name;
    const { rows } = await ctx.db.pool.query<{ id: string }>(`SELECT id FROM logs."${table}"`);
    return rows.map((r) => r.id);
  }

  before(async () => {
    original = await buildOriginal({ eventsPerSourceDay: 25 });
    const target = await createEmptyDatabase();
    env = { DATABASE_URL: target.url, LOAD_DEMO_DATA: 'false', LOG_LEVEL: 'silent' };
    before_ = await schemaSnapshot(original.url, '_analytics');
    first = await importOnce();
    ctx = await createContext(testConfig(target.url), createLogger('silent'));
    app = await createApp(ctx);
  });
  after(async () => {
    await ctx?.close();
  });

  it('when it runs, then it exits 0, reports what it could not import, and draws its progress on stderr', () => {
    assert.equal(first.code, 0, first.err);
    assert.match(first.err, /Not everything was imported/);
    assert.match(first.progress, /100% [\d,]+\/[\d,]+ events, [\d,]+ events\/s/);
  });

  it('when it runs, then every source is here with its token as id, and its retention', async () => {
    await ctx.sources.reload();
    for (const s of original.sources) {
      const here = await ctx.sources.get(s.token);
      assert.equal(here.name, s.name);
      assert.equal(here.retention_days, s.ttl ?? 30, s.name);
    }
    assert.deepEqual(first.report.sources.imported, [CUSTOM_SOURCE]);
    assert.equal(first.report.sources.adopted.length, original.sources.length - 1, 'the stack sources created at start take the tokens');
    assert.deepEqual(first.report.sources.skipped, []);
  });

  it('when it runs, then every event is here once, with its id and timestamp to the microsecond, older than the retention too', async () => {
    for (const s of original.sources) {
      const expected = original.events
        .get(s.name)!
        .map((e) => e.id)
        .filter((id) => id !== original.refusedEventId);
      const ids = await idsOf(s.name);
      assert.equal(ids.length, expected.length, s.name);
      assert.deepEqual(new Set(ids), new Set(expected), s.name);
    }
    const sample = original.events.get('postgres.logs')![0]; // three days back, past its 2 days of retention
    const table = (await ctx.sources.get('postgres.logs')).table_name;
    const { rows } = await ctx.db.pool.query<{ ts: string }>(
      `SELECT to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS ts FROM logs."${table}" WHERE id = $1`,
      [sample.id],
    );
    assert.equal(rows[0]?.ts, sample.timestamp);
  });

  it('when an event cannot be stored here, then the report names it and counts it', () => {
    const gotrue = first.report.events.find((e) => e.source === 'gotrue.logs.prod')!;
    assert.equal(gotrue.rejected, 1);
    assert.equal(gotrue.imported + gotrue.rejected, gotrue.events);
    assert.match(gotrue.reasons[0], new RegExp(`event ${original.refusedEventId}: metadata must be`));
    const total = first.report.events.reduce((n, e) => n + e.imported + e.rejected, 0);
    assert.equal(total, original.totalEvents);
  });

  it('when it runs, then the events went through the write path: the schema knows their fields and hot leaves are filled', async () => {
    const edge = await ctx.sources.get('cloudflare.logs.prod');
    assert.ok(JSON.stringify(edge.schema).includes('origin_time'), 'a field of the events is in the inferred schema');
    const { rows } = await ctx.db.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM logs."${edge.table_name}" WHERE "metadata.response.status_code" = 503`,
    );
    assert.equal(Number(rows[0].n), (original.events.get('cloudflare.logs.prod')!.length / 25) * 4);
  });

  it('when it runs, then endpoints arrive with their tokens as ids, readers after what they read, source_mapping followed', async () => {
    const { imported, skipped, public: open } = first.report.endpoints;
    assert.deepEqual([...imported].sort(), ['auth.recent', 'errors.per.day', 'status.codes']);
    assert.ok(imported.indexOf('status.codes') < imported.indexOf('errors.per.day'), 'the reader comes after what it reads');
    assert.deepEqual(open, ['auth.recent']);
    for (const name of imported) {
      const e = original.endpoints.find((o) => o.name === name)!;
      const here = await ctx.db.knex('endpoints').where({ id: e.token }).first();
      assert.equal(here?.name, name);
      assert.equal(here?.max_rows, 500);
      assert.equal(here?.labels, 'team=edge');
    }
    const statusCodes = await ctx.db.knex('endpoints').where({ name: 'status.codes' }).first();
    assert.match(statusCodes.query, /from `cloudflare\.logs\.prod` t cross join/);
    const reasons = new Map(skipped.map((s) => [s.name, s.reason]));
    assert.match(reasons.get('pg.native')!, /language/);
    assert.match(reasons.get('broken.sql')!, /no_such_function/);
    assert.match(reasons.get('logs.all')!, /exists here already/);
    assert.equal(skipped.length, 3);
  });

  it('when an imported endpoint is called with an imported scoped token, then it answers from the imported events', async () => {
    const scoped = original.tokens.find((t) => t.scopes.startsWith('query:endpoint:'))!.token;
    const statusCodes = original.endpoints.find((e) => e.name === 'status.codes')!;
    const res = await request(app).get(`/api/endpoints/query/${statusCodes.token}`).set('X-API-KEY', scoped).expect(200);
    const rows = res.body.result as { n: number; errors: number }[];
    assert.equal(rows.length, 4);
    assert.equal(
      rows.reduce((n, r) => n + r.n, 0),
      original.events.get('cloudflare.logs.prod')!.length,
    );
    assert.equal(
      rows.reduce((n, r) => n + r.errors, 0),
      16,
    );
    const reader = original.endpoints.find((e) => e.name === 'errors.per.day')!;
    await request(app).get(`/api/endpoints/query/${reader.token}`).set('X-API-KEY', scoped).expect(403);
    const open = await request(app).get('/api/endpoints/query/auth.recent').expect(200);
    assert.equal(open.body.result.length, 10);
  });

  it('when it runs, then access tokens keep working with their scopes, stored only as hashes', async () => {
    const [privateToken, publicToken, , dbShipper, legacy, revoked, nativeReader] = original.tokens;
    await request(app).get('/api/endpoints').set('X-API-KEY', privateToken.token).expect(200);
    await request(app).get('/api/endpoints').set('X-API-KEY', publicToken.token).expect(403);
    const postgresLogs = original.sources.find((s) => s.name === 'postgres.logs')!.token;
    const edge = original.sources.find((s) => s.name === 'cloudflare.logs.prod')!.token;
    const event = { event_message: 'after the move', project: 'default' };
    await request(app).post(`/api/logs?source=${postgresLogs}`).set('X-API-KEY', publicToken.token).send(event).expect(200);
    await request(app).post(`/api/logs?source=${postgresLogs}`).set('X-API-KEY', dbShipper.token).send(event).expect(200);
    await request(app).post(`/api/logs?source=${edge}`).set('X-API-KEY', dbShipper.token).send(event).expect(403);
    await request(app).post(`/api/logs?source=${edge}`).set('X-API-KEY', legacy.token).send(event).expect(200);
    await request(app).post(`/api/logs?source=${edge}`).set('X-API-KEY', revoked.token).send(event).expect(401);
    await request(app).get('/api/endpoints/query/auth.recent').set('X-API-KEY', original.userApiKey).expect(200);
    await request(app).post(`/api/logs?source=${edge}`).set('X-API-KEY', nativeReader.token).send(event).expect(401);

    assert.equal(first.report.tokens.imported, 6, 'five tokens and the user api_key');
    assert.equal(first.report.tokens.revoked, 1);
    assert.match(first.report.tokens.skipped[0].reason, /query:endpoint:\d+" names something that is not imported/);
    for (const t of original.tokens) {
      const { rows } = await ctx.db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM api_keys k WHERE k::text LIKE '%' || $1 || '%'`, [
        t.token,
      ]);
      assert.equal(Number(rows[0].n), 0, 'no token is stored as it is');
    }
    const hash = createHash('sha256').update(privateToken.token).digest('hex');
    assert.equal((await ctx.db.knex('api_keys').where({ key_hash: hash }).first())?.name, 'LOGFLARE_PRIVATE_ACCESS_TOKEN');
  });

  it('when it runs again, then it imports nothing twice', async () => {
    const counts = async () => Promise.all(original.sources.map(async (s) => (await idsOf(s.name)).length));
    const endpoints = await ctx.db.knex('endpoints').count<{ count: string }[]>('* as count');
    const keys = await ctx.db.knex('api_keys').count<{ count: string }[]>('* as count');
    const before = await counts();
    const again = await importOnce();
    assert.equal(again.code, 0, again.err);
    assert.equal(again.report.run.events, 0);
    assert.deepEqual(again.report.sources.imported, []);
    assert.deepEqual(again.report.sources.adopted, []);
    assert.equal(again.report.sources.existing.length, original.sources.length);
    assert.deepEqual(again.report.endpoints.imported, []);
    assert.equal(again.report.tokens.imported, 0);
    assert.deepEqual(await counts(), before);
    assert.deepEqual(await ctx.db.knex('endpoints').count<{ count: string }[]>('* as count'), endpoints);
    assert.deepEqual(await ctx.db.knex('api_keys').count<{ count: string }[]>('* as count'), keys);
  });

  it('when it has run, then the original is exactly as it was', async () => {
    assert.equal(await schemaSnapshot(original.url, '_analytics'), before_);
  });

  it('when it is pointed at a database without the original, then it says so and exits 1', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['import', 'logflare', '--from', env.DATABASE_URL, '--schema', 'nowhere'], {
      env,
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    assert.equal(code, 1);
    const missing = await runCli(['import', 'logflare'], { env, out: () => undefined, err: (t) => err.push(t) });
    assert.equal(missing, 2, 'no --from and no original environment');
    assert.match(err.join('\n'), /no table nowhere\.sources, .* is it the original's, and its schema "nowhere" \(--schema\)\?/);
  });
});
