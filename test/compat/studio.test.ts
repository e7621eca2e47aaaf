/**
 * The self-hosted dashboard's own queries (test/compat/studio/queries.json, reproduced from its
 * public source; see that folder's README for the pages covered), sent to `logs.all` the way its
 * proxy sends them: `project`, the window, and `sql`. Realistic events of every log table
 * (events.json) are ingested first. Every query must answer 200, except the dashboard's own
 * bugs (a name nothing in its FROM binds), which must answer a 400 naming that name. A name that
 * only the events of the one table in scope could hold reads as NULL, as on the original's
 * Postgres backend: 200, and a warning naming it (`warns`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { DEFAULT_SOURCES } from '../../src/sources/defaults.js';
import { testApp, type TestApp } from '../support/http.js';
import { reproject } from '../support/projects.js';

interface StudioQuery {
  id: string;
  page: string;
  self_hosted: boolean;
  endpoint: 'logs.all' | 'usage.api-counts';
  params: Record<string, string>;
  sql: string | null;
  /**
   * 200; 200 with a warning naming `warns` (a field no event of the one table in scope has); or
   * the dashboard's own bug: a 400 naming the name nothing binds, or saying what is wrong (`message`).
   */
  expect: 'ok' | { status: 200; warns: string } | { status: 400; names?: string; message?: string };
}

const read = (file: string) => JSON.parse(readFileSync(new URL(`./studio/${file}`, import.meta.url), 'utf8'));
const QUERIES: StudioQuery[] = read('queries.json');
const EVENTS: Record<string, Array<Record<string, unknown> & { timestamp_offset_seconds: number }>> = read('events.json');

describe("compatibility: the dashboard's queries through logs.all", function () {
  this.timeout(30_000);
  // The fixtures' project "default" becomes this run's own, so other tests' rows never mix in.
  const project = `studio-${Date.now().toString(36)}`;
  const now = Date.now();
  let t: TestApp;
  const rowCounts = new Map<string, number>();

  before(async () => {
    t = await testApp();
    for (const { cte, name } of DEFAULT_SOURCES) {
      const events = (EVENTS[cte] ?? []).map(({ timestamp_offset_seconds, ...event }) =>
        reproject({ ...event, timestamp: new Date(now + timestamp_offset_seconds * 1000).toISOString() }, (p) =>
          p === 'default' ? project : p,
        ),
      );
      assert.ok(events.length > 0, `events for ${cte}`);
      await request(t.app)
        .post(`/api/logs?source_name=${encodeURIComponent(name)}`)
        .set('X-API-KEY', t.keys.ingest)
        .send(events)
        .expect(200);
    }
  });

  for (const q of QUERIES) {
    const expectation =
      q.expect === 'ok'
        ? 'answers 200'
        : 'warns' in q.expect
          ? `answers 200 and warns: ${q.expect.warns} reads as NULL`
          : `answers 400: ${q.expect.names ?? q.expect.message}`;
    it(`${q.id} (${q.page}${q.self_hosted ? '' : ', hosted only'}) ${expectation}`, async () => {
      const params: Record<string, string> = { project, ...shiftWindow(q.params, now) };
      if (q.sql !== null) params.sql = q.sql;
      const res = await request(t.app).get(`/api/endpoints/query/${q.endpoint}`).query(params).set('X-API-KEY', t.keys.query);
      if (q.expect === 'ok') {
        assert.equal(res.status, 200, res.text);
        assert.ok(Array.isArray(res.body.result));
        rowCounts.set(q.id, res.body.result.length);
      } else if ('warns' in q.expect) {
        assert.equal(res.status, 200, res.text);
        const name = q.expect.warns.split('.').pop()!;
        for (const row of res.body.result) if (name in row) assert.equal(row[name], null, `${name} reads as NULL`);
        const translated = await request(t.app).get(`/api/endpoints/${q.endpoint}/sql`).query(params).set('X-API-KEY', t.keys.admin);
        assert.equal(translated.status, 200, translated.text);
        const said = new RegExp(`unknown field ${q.expect.warns.split('.')[0]}\\b.*reads as NULL`);
        assert.ok(
          translated.body.warnings.some((w: { message: string }) => said.test(w.message)),
          JSON.stringify(translated.body.warnings),
        );
      } else {
        assert.equal(res.status, q.expect.status, res.text);
        assert.equal(res.body.error.status, 'INVALID_ARGUMENT');
        // The name as the translator meets it: `response.status_code` is an unknown name `response`, or a field of an ARRAY.
        const said = q.expect.names ? new RegExp(`\\b(${q.expect.names.split('.').join('|')})\\b`) : new RegExp(q.expect.message!);
        assert.match(res.body.error.message, said);
      }
    });
  }

  it("when the default page of every log table is opened, then it shows that table's events", () => {
    const empty = QUERIES.filter((q) => q.self_hosted && /^preview\/[a-z_]+\/default$/.test(q.id) && rowCounts.get(q.id) === 0).map(
      (q) => q.id,
    );
    assert.ok(QUERIES.some((q) => /^preview\/[a-z_]+\/default$/.test(q.id)));
    assert.deepEqual(empty, []);
  });

  it('when all the self-hosted queries have run, then most of them found rows (the events carry the fields they read)', () => {
    const ran = QUERIES.filter((q) => q.self_hosted && rowCounts.has(q.id));
    const withRows = ran.filter((q) => rowCounts.get(q.id)! > 0);
    assert.ok(
      withRows.length >= 0.7 * ran.length,
      `${withRows.length} of ${ran.length} found rows; empty: ${ran
        .filter((q) => rowCounts.get(q.id) === 0)
        .map((q) => q.id)
        .join(', ')}`,
    );
  });
});

/** The query's window, same length, ending five minutes from now (the fixtures' dates are fixed). */
function shiftWindow(params: Record<string, string>, now: number): Record<string, string> {
  const { iso_timestamp_start: start, iso_timestamp_end: end } = params;
  if (!start || !end) return params;
  const length = Date.parse(end) - Date.parse(start);
  const newEnd = now + 5 * 60_000;
  return { ...params, iso_timestamp_start: new Date(newEnd - length).toISOString(), iso_timestamp_end: new Date(newEnd).toISOString() };
}
