import assert from 'node:assert/strict';
import request from 'supertest';
import { DEFAULT_SOURCES } from '../../src/sources/defaults.js';
import { insertEvents } from '../support/db.js';
import { testApp } from '../support/http.js';

const MINUTE = 60_000;

/** An event of `source` that belongs to `project`, with the project where that source keeps it (docs/COMPATIBILITY.md, "Log sources"). */
function eventFor(source: string, project: string, id: string, at: number): object {
  const base = { id, timestamp: new Date(at).toISOString(), event_message: `${source} ${id}` };
  switch (source) {
    case 'deno-relay-logs':
    case 'deno-subhosting-events':
      return { ...base, metadata: { project_ref: project, level: 'info' } };
    case 'realtime.logs.prod':
    case 'storage.logs.prod.2':
      return { ...base, metadata: { project, level: 'info' } };
    default:
      return { ...base, project, metadata: { host: 'db' } };
  }
}

async function query(params: Record<string, string>) {
  const { app, keys } = await testApp();
  return request(app).get('/api/endpoints/query/logs.all').query(params).set('X-API-KEY', keys.query);
}

describe('logs.all', () => {
  const tag = `la${Date.now().toString(36)}`;
  const t0 = Date.now() - 30 * MINUTE;

  before(async () => {
    for (const { name } of DEFAULT_SOURCES) {
      await insertEvents(name, [
        eventFor(name, tag, `${tag}-${name}-mine`, t0),
        eventFor(name, `${tag}-other`, `${tag}-${name}-other`, t0),
      ]);
    }
  });

  for (const { cte, name } of DEFAULT_SOURCES) {
    it(`when sql reads ${cte}, then only ${name} entries of the project come back`, async () => {
      const res = await query({ project: tag, sql: `select id, event_message from ${cte}` });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.result, [{ id: `${tag}-${name}-mine`, event_message: `${name} ${tag}-${name}-mine` }]);
    });
  }

  describe('time window', () => {
    const w = `${tag}w`;
    const at = [0, 1, 2, 3].map((i) => Date.now() - 20 * MINUTE + i * MINUTE);
    const iso = (ms: number) => new Date(ms).toISOString();
    before(() =>
      insertEvents(
        'cloudflare.logs.prod',
        at.map((ms, i) => ({ id: `${w}-${i}`, project: w, timestamp: iso(ms), event_message: `e${i}` })),
      ),
    );

    it('when both bounds are given, then the start is exclusive and the end inclusive', async () => {
      const res = await query({ project: w, iso_timestamp_start: iso(at[0]), iso_timestamp_end: iso(at[2]) });
      assert.deepEqual(
        res.body.result.map((r: { id: string }) => r.id),
        [`${w}-2`, `${w}-1`],
      );
    });

    it('when the bounds are missing or empty, then there is no bound', async () => {
      const missing = await query({ project: w });
      const empty = await query({ project: w, iso_timestamp_start: '', iso_timestamp_end: '' });
      assert.deepEqual(
        missing.body.result.map((r: { id: string }) => r.id),
        [`${w}-3`, `${w}-2`, `${w}-1`, `${w}-0`],
      );
      assert.deepEqual(empty.body, missing.body);
    });

    it('when only the start is given, then everything after it comes back', async () => {
      const res = await query({ project: w, iso_timestamp_start: iso(at[1]) });
      assert.deepEqual(
        res.body.result.map((r: { id: string }) => r.id),
        [`${w}-3`, `${w}-2`],
      );
    });

    it('when a bound is not an ISO timestamp, then 400', async () => {
      const res = await query({ project: w, iso_timestamp_end: 'yesterday-ish' });
      assert.equal(res.status, 400);
      assert.equal(res.body.error.status, 'INVALID_ARGUMENT');
    });

    it('when project is missing, then 400 names it', async () => {
      const res = await query({});
      assert.equal(res.status, 400);
      assert.equal(res.body.error.errors[0].location, 'project');
    });
  });

  describe('default selection and encoding', () => {
    const d = `${tag}d`;
    const base = Date.now() - 60 * MINUTE;
    before(() =>
      insertEvents(
        'cloudflare.logs.prod',
        Array.from({ length: 120 }, (_, i) => ({
          id: `${d}-${String(i).padStart(3, '0')}`,
          project: d,
          timestamp: new Date(base + i * 1000).toISOString().replace('Z', '') + '123Z', // microseconds: .xxx123
          event_message: `m${i}`,
          metadata: { request: { path: `/rest/v1/t${i}`, headers: { host: 'h' } }, response: { status_code: 200 } },
        })),
      ),
    );

    it('when called without sql, then the 100 newest edge entries come back, newest first', async () => {
      const res = await query({ project: d });
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-cache'], 'BYPASS', 'logs.all does not cache');
      const ids = res.body.result.map((r: { id: string }) => r.id);
      assert.equal(ids.length, 100);
      assert.deepEqual(
        ids,
        Array.from({ length: 100 }, (_, i) => `${d}-${String(119 - i).padStart(3, '0')}`),
      );
      assert.deepEqual(Object.keys(res.body.result[0]), ['id', 'timestamp', 'event_message', 'metadata']);
    });

    it('when rows are encoded, then timestamps are integer microseconds and metadata has the stored repeated shape', async () => {
      const res = await query({ project: d, sql: `select id, timestamp, metadata from edge_logs where id = '${d}-005'` });
      const [row] = res.body.result;
      assert.equal(row.timestamp, (base + 5000) * 1000 + 123);
      assert.deepEqual(row.metadata, [{ request: [{ path: '/rest/v1/t5', headers: [{ host: 'h' }] }], response: [{ status_code: 200 }] }]);
    });

    it('when a sandboxed query asks for more rows than max rows, then it is capped at 1000', async () => {
      const many = `${tag}many`;
      await insertEvents(
        'cloudflare.logs.prod',
        Array.from({ length: 1100 }, (_, i) => ({ id: `${many}-${i}`, project: many, event_message: 'x' })),
      );
      const res = await query({ project: many, sql: 'select id from edge_logs limit 5000' });
      assert.equal(res.status, 200);
      assert.equal(res.body.result.length, 1000);
    });

    it('when a parameter value looks like SQL, then it is only a value and matches nothing', async () => {
      const res = await query({ project: `' or 1=1 --` });
      assert.deepEqual(res.body, { result: [] });
      const viaSql = await query({ project: `' or 1=1 --`, sql: 'select count(*) as n from edge_logs' });
      assert.deepEqual(viaSql.body, { result: [{ n: 0 }] });
    });

    it('when POST carries the parameters in a JSON body, then it answers as GET does', async () => {
      const { app, keys } = await testApp();
      const res = await request(app)
        .post('/api/endpoints/query/logs.all')
        .set('X-API-KEY', keys.query)
        .send({ project: d, sql: `select count(*) as n from edge_logs` });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { result: [{ n: 120 }] });
    });
  });
});
