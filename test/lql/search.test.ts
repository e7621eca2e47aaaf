/**
 * GET /api/sources/:idOrName/events: LQL over one source through the translator, run on the real
 * Postgres; pages by cursor, a histogram of the window, charts for `c:`, errors with a column.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { testApp, type TestApp, withKey } from '../support/http.js';

const SOURCE = 'lql.search.test';
/** The start of the hour three hours ago: inside retention, and a whole hour of its own. */
const BASE = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3 * 3_600_000;
const at = (minutes: number) => new Date(BASE + minutes * 60_000).toISOString();

const EVENTS = [
  { message: 'GET /a 200', timestamp: at(0), metadata: { status: 200, method: 'GET', tags: ['x', 'y'], user: { plan: 'pro' } } },
  { message: 'GET /b 500 error', timestamp: at(1), metadata: { status: 500, method: 'GET', tags: ['y'], user: { plan: 'free' } } },
  { message: 'POST /c 404 Error', timestamp: at(2), metadata: { status: 404, method: 'POST', tags: ['z'] } },
  { message: 'under_score 100%', timestamp: at(3), metadata: { status: 201, method: 'PUT', tags: [] } },
  { message: 'POST /d 503 error', timestamp: at(30), metadata: { status: 503, method: 'POST', tags: ['x'], user: { plan: 'pro' } } },
];
const WINDOW = `start=${encodeURIComponent(at(-1))}&end=${encodeURIComponent(at(60))}`;

describe('LQL search: GET /api/sources/:idOrName/events', function () {
  this.timeout(30_000);
  let t: TestApp;
  const search = (lql: string, extra = '') =>
    withKey(t.app, t.keys.admin).get(`/api/sources/${SOURCE}/events?lql=${encodeURIComponent(lql)}&${WINDOW}${extra}`);
  const messages = (body: { result: { event_message: string }[] }) => body.result.map((r) => r.event_message);

  before(async () => {
    t = await testApp();
    await withKey(t.app, t.keys.admin).post('/api/sources', { name: SOURCE }).expect(201);
    await request(t.app).post(`/api/logs?source_name=${SOURCE}`).set('X-API-KEY', t.keys.ingest).send(EVENTS).expect(200);
  });
  after(async () => {
    await withKey(t.app, t.keys.admin).delete(`/api/sources/${SOURCE}`);
  });

  it('when a word, a field filter and a negation are given, then only the matching events come, newest first', async () => {
    const res = await search('error m.status:>=500 -m.method:GET');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(messages(res.body), ['POST /d 503 error']);
    const all = await search('').expect(200);
    assert.deepEqual(messages(all.body), EVENTS.map((e) => e.message).reverse());
  });

  it('when a word holds LIKE wildcards, then they match themselves only', async () => {
    assert.deepEqual(messages((await search('100%').expect(200)).body), ['under_score 100%']);
    assert.deepEqual(messages((await search('unde_').expect(200)).body), []);
  });

  it('when pages are asked for, then the cursor walks older events without gaps or repeats', async () => {
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 5; page++) {
      const res = await search('', `&limit=2${cursor ? `&cursor=${cursor}` : ''}`).expect(200);
      seen.push(...messages(res.body));
      if (!res.body.cursor) break;
      cursor = res.body.cursor;
    }
    assert.deepEqual(seen, EVENTS.map((e) => e.message).reverse());
  });

  it('when searched, then the histogram counts the matching events per bucket of the window', async () => {
    const res = await search('m.method:POST').expect(200);
    assert.equal(res.body.histogram.interval_seconds, 60);
    assert.deepEqual(res.body.histogram.buckets, [
      { timestamp: at(2).replace('.000Z', '.000000Z'), count: 1 },
      { timestamp: at(30).replace('.000Z', '.000000Z'), count: 1 },
    ]);
  });

  it('when the LQL has c:, then chart points come instead of events', async () => {
    const res = await search('c:count(*) c:group_by(t::hour)').expect(200);
    assert.equal(res.body.kind, 'chart');
    assert.deepEqual(res.body.result, [{ timestamp: BASE * 1000, value: 5 }]);
    const max = await search('c:max(m.status) c:group_by(t::hour)').expect(200);
    assert.equal(max.body.result[0].value, 503);
  });

  it('when the LQL does not parse or names an unknown field, then 400 with its column', async () => {
    const bad = await search('m.status:>=500 m.nope:1').expect(400);
    assert.equal(bad.body.error.errors[0].location, 'lql:1:16');
    assert.match(bad.body.error.message, /metadata\.nope/);
    const syntax = await search('"unclosed').expect(400);
    assert.equal(syntax.body.error.errors[0].location, 'lql:1:1');
    await search('', '&limit=0').expect(400);
    await search('', '&cursor=nonsense').expect(400);
  });
});
