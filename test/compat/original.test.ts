/**
 * The original service's own SQL tests as data (test/compat/original/cases.json, see its
 * README): every input our HTTP API can express is run through it, the way a user would: its
 * sources created under the names it uses, its fixture events ingested, the endpoint created,
 * then called. Accepted inputs must answer 200 (with the rows the original's test asserts, where
 * it asserts some); rejected ones must answer a 4xx at creation or at the call, never a 5xx.
 * Deliberate differences are listed in DIFFERENCES, each with its reason (docs/COMPATIBILITY.md).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { DEFAULT_SOURCES } from '../../src/sources/defaults.js';
import { testApp, type TestApp, withKey } from '../support/http.js';
import { reproject } from '../support/projects.js';

interface Case {
  id: string;
  kind: 'endpoint' | 'sandboxed' | 'translation';
  query: string;
  sandbox_sql?: string;
  /** LQL sent as `lql=` instead of `sql=`. */
  lql?: string;
  sources: string[];
  missing_sources?: string[];
  params?: Record<string, string>;
  events?: Record<string, Record<string, unknown>[]>;
  nested_endpoints?: Record<string, string>;
  endpoint_settings?: Record<string, unknown>;
  expect: { accept: boolean; rows?: Record<string, unknown>[]; match?: 'subset' | 'exact'; parameters?: string[] };
  expressible: boolean;
}

const CASES: Case[] = JSON.parse(readFileSync(new URL('./original/cases.json', import.meta.url), 'utf8'));

/** Where we answer differently from the original on purpose; docs/COMPATIBILITY.md gives the reasons. */
const BIGQUERY_REFUSES_TOO =
  'names a column that the CTE or subquery it reads does not select, and its rows are not the events of one source: BigQuery refuses it too (the original only rewrote the text)';
const DIFFERENCES: Record<string, { accept: boolean; rows?: Record<string, unknown>[]; why: string }> = {
  // We allow SELECT *: on Postgres it costs no more than naming the columns.
  'sql_test/pg/wildcard': { accept: true, why: 'SELECT * is allowed' },
  'postgres_adaptor/blocked-wildcard': { accept: true, why: 'SELECT * is allowed' },
  'sql_test/invalid/sandbox-wildcard': { accept: true, why: 'SELECT * is allowed' },
  // In BigQuery SQL these are names, not Postgres functions: an unknown field, read as NULL; nothing of the database is reached.
  'sql_test/pg/current-user': { accept: true, why: 'current_user is a name in BigQuery SQL, read as a field not seen yet' },
  'sql_test/pg/restricted-current_role': { accept: true, why: 'current_role is a name in BigQuery SQL' },
  'sql_test/pg/restricted-current_catalog': { accept: true, why: 'current_catalog is a name in BigQuery SQL' },
  'postgres_adaptor/blocked-current_user': { accept: true, why: 'current_user is a name in BigQuery SQL' },
  'postgres_adaptor/blocked-current_role': { accept: true, why: 'current_role is a name in BigQuery SQL' },
  'postgres_adaptor/blocked-current_catalog': { accept: true, why: 'current_catalog is a name in BigQuery SQL' },
  // Inputs BigQuery itself refuses, which the original's tests only rewrote as text and never ran.
  // A name a CTE of one source's events does not select reads NULL (docs/COMPATIBILITY.md, "Unknown fields"); the
  // original's translation read `t.deep` from the CTE's `metadata` column instead.
  'sql_test/translate/regexp-contains-nested-field-where-cte': {
    accept: true,
    rows: [],
    why: '`t.deep` is not selected by the CTE `data`: NULL, so UNNEST gives no rows; the original read it from metadata',
  },
  'sql_test/expand_subqueries/bq-endpoint': { accept: false, why: BIGQUERY_REFUSES_TOO },
  'dialect_translation/cte-union-body': { accept: false, why: BIGQUERY_REFUSES_TOO },
  'sql_test/translate/current-timestamp-in-cte': { accept: false, why: 'a CTE is read without naming it in FROM' },
  'sql_test/bq/array-index': { accept: false, why: 'd is not defined anywhere (no FROM)' },
  'sql_test/bq/struct-column-ref': { accept: false, why: 't is not defined anywhere (no FROM)' },
  'sql_test/bq/struct-named-field': { accept: false, why: 'str_col is not defined anywhere (no FROM)' },
  'sql_test/bq/array-offset': { accept: false, why: 'd is not defined anywhere (no FROM)' },
  'sql_test/transform/recursive-cte-without-recursive-keyword': {
    accept: false,
    why: 'a CTE reading itself needs WITH RECURSIVE in BigQuery, which is refused',
  },
  'sql_test/transform/having': { accept: false, why: 'val is neither grouped nor aggregated' },
  'dialect_translation/nested-ctes-metadata': { accept: false, why: 'UNION ALL of 4 and 3 columns' },
  'sql_test/translate/cte-alias-not-json': { accept: false, why: 'field access on an ARRAY (metadata) without UNNEST' },
  'dialect_translation/three-part-cte-column': { accept: false, why: 'field access on an ARRAY (metadata) without UNNEST' },
  'dialect_translation/deep-cte-column': { accept: false, why: 'field access on an ARRAY (metadata) without UNNEST' },
  'dialect_translation/cast-bigint-cte-field': { accept: false, why: 'CAST(TIMESTAMP AS INT64) does not exist in BigQuery' },
  'sql_test/translate/date-trunc-field': {
    accept: false,
    why: "DATE_TRUNC('day', col) is the Postgres argument order; BigQuery takes DATE_TRUNC(col, DAY)",
  },
  // Two source tables, neither of which has seen the unqualified name: which one it means is a guess.
  'sql_test/transform/join-alias': { accept: false, why: 'an unqualified name unknown to both joined tables is ambiguous; qualify it' },
  'sql_test/transform/left-join': { accept: false, why: 'an unqualified name unknown to both joined tables is ambiguous; qualify it' },
  // We check a definition when it is saved: text that is not SQL is refused with 422.
  'endpoints_test/changeset-select-1': { accept: false, why: 'the query "query" is not SQL; definitions are checked when saved' },
  // BigQuery semantics: CROSS JOIN UNNEST(metadata) drops an event without metadata. The original's
  // Postgres translation drops the UNNEST instead, so these (skipped, "flaky") tests expect the row.
  'endpoints_controller/supabase-edge-logs': {
    accept: true,
    rows: [],
    why: 'CROSS JOIN UNNEST of a missing record drops the row, as in BigQuery',
  },
  'endpoints_controller/supabase-edge-logs-unnest': {
    accept: true,
    rows: [],
    why: 'CROSS JOIN UNNEST of a missing record drops the row, as in BigQuery',
  },
  'endpoints_controller/supabase-event-chart': {
    accept: true,
    rows: [],
    why: 'CROSS JOIN UNNEST of a missing record drops the row, as in BigQuery',
  },
  'endpoints_controller/supabase-by-id': {
    accept: true,
    rows: [],
    why: 'CROSS JOIN UNNEST of a missing record drops the row, as in BigQuery',
  },
};

const DEFAULT_NAMES = new Set<string>(DEFAULT_SOURCES.map((s) => s.name));
const PLACEHOLDERS: Record<string, () => string> = {
  '<now minus 3 days, ISO-8601>': () => new Date(Date.now() - 3 * 86_400_000).toISOString(),
  '<now - 1h>': () => new Date(Date.now() - 3_600_000).toISOString(),
  '<now + 1h>': () => new Date(Date.now() + 3_600_000).toISOString(),
};
/** Values the original's test does not know in advance (a generated id): any value passes. */
const ANY_VALUE = new Set(['<log_id>']);

describe("compatibility: the original service's SQL tests", function () {
  this.timeout(60_000);
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  const admin = () => withKey(t.app, t.keys.admin);

  CASES.forEach((c, index) => {
    if (!c.expressible) return;
    const expected = DIFFERENCES[c.id] ?? c.expect;
    it(`${c.id}: ${expected.accept ? 'runs' : 'is refused with a 4xx'}`, async () => {
      // The project "default" of the fixtures becomes one of this case's own, so rows of other tests never mix in.
      const project = `compat-original-${index}`;
      const own = (value: unknown): unknown => (value === 'default' ? project : value);
      const created: string[] = [];
      const endpoints: string[] = [];
      try {
        for (const name of c.sources) {
          if (DEFAULT_NAMES.has(name) || c.missing_sources?.includes(name)) continue;
          const res = await admin().post('/api/sources', { name });
          if (res.status === 201) created.push(name);
          else assert.equal(res.status, 409, `source ${name}: ${res.text}`);
        }
        for (const [source, events] of Object.entries(c.events ?? {})) {
          if (!c.sources.includes(source) && !DEFAULT_NAMES.has(source)) continue;
          const body = events.map((e) => reproject(e, own));
          await request(t.app)
            .post(`/api/logs?source_name=${encodeURIComponent(source)}`)
            .set('X-API-KEY', t.keys.ingest)
            .send(body)
            .expect(200);
        }
        for (const [name, query] of Object.entries(c.nested_endpoints ?? {})) {
          const res = await admin().post('/api/endpoints', { name, query });
          assert.equal(res.status, 201, `nested endpoint ${name}: ${res.text}`);
          endpoints.push(name);
        }
        const name = `compat.original.${index}`;
        const definition = {
          name,
          query: c.query,
          sandboxable: c.kind === 'sandboxed' || c.params?.sql !== undefined,
          ...c.endpoint_settings,
        };
        const saved = await admin().post('/api/endpoints', definition);
        assertNoServerError(saved, 'create');
        if (saved.status === 201) endpoints.push(name);
        if (!expected.accept && saved.status !== 201) {
          assert.equal(saved.status, 422, saved.text);
          return;
        }
        assert.equal(saved.status, 201, `create: ${saved.text}`);
        if (c.expect.parameters)
          assert.deepEqual(
            saved.body.parameters.map((p: { name: string }) => p.name),
            c.expect.parameters,
          );
        const query: Record<string, string> = {};
        for (const [k, v] of Object.entries(c.params ?? {})) query[k] = String(own(PLACEHOLDERS[v]?.() ?? v));
        if (c.sandbox_sql !== undefined) query.sql = c.sandbox_sql;
        if (c.lql !== undefined) query.lql = c.lql;
        const run = await request(t.app)
          .get(`/api/endpoints/query/${encodeURIComponent(name)}`)
          .query(query)
          .set('X-API-KEY', t.keys.query);
        assertNoServerError(run, 'run');
        if (!expected.accept) {
          assert.ok(run.status >= 400 && run.status < 500, `expected a 4xx, got ${run.status}: ${run.text}`);
          return;
        }
        assert.equal(run.status, 200, run.text);
        if (expected.rows) assertRows(run.body.result, expected.rows, DIFFERENCES[c.id] ? 'exact' : (c.expect.match ?? 'exact'));
      } finally {
        for (const name of endpoints.reverse()) await admin().delete(`/api/endpoints/${encodeURIComponent(name)}`);
        for (const name of created) await admin().delete(`/api/sources/${encodeURIComponent(name)}`);
      }
    });
  });
});

function assertNoServerError(res: request.Response, step: string): void {
  assert.ok(res.status < 500, `${step} answered ${res.status}: ${res.text}`);
}

/** `subset`: the same number of rows, each holding the expected keys with the expected values. */
function assertRows(actual: Record<string, unknown>[], expected: Record<string, unknown>[], match: 'subset' | 'exact'): void {
  assert.equal(actual.length, expected.length, `rows: ${JSON.stringify(actual)}`);
  expected.forEach((row, i) => {
    const keys = match === 'exact' ? Object.keys(actual[i]) : Object.keys(row);
    for (const key of keys) {
      if (ANY_VALUE.has(row[key] as string)) assert.ok(actual[i][key] !== undefined, key);
      else assert.deepEqual(actual[i][key], row[key], `row ${i}, ${key}: ${JSON.stringify(actual)}`);
    }
  });
}
