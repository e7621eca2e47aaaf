import assert from 'node:assert/strict';
import { encodeResultBody, encodeRows, RAW_TYPES, timestamptzToMicros } from '../../src/query/encode.js';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import { loadSources, testDatabase } from '../support/db.js';

describe('row encoding', () => {
  const sql = `SELECT
      '2026-11-22 13:00:00.123456+00'::timestamptz AS ts,
      '2026-11-22 13:00:00.25'::timestamp AS dt,
      '2026-11-22 13:00:00'::timestamp AS dt_whole,
      42::bigint AS i, 1.5::float8 AS f, 'NaN'::float8 AS nan, 2.50::numeric AS n, true AS b, 'a "quoted"\\ \u00e9 line\nbreak'::text AS s,
      NULL::text AS nothing,
      '[{"request": [{"path": "/rest", "n": 1.0, "big": 12345678901234567890}]}]'::jsonb AS metadata,
      ARRAY['2026-11-22 00:00:00+00'::timestamptz] AS tss, ARRAY[1, 2]::bigint[] AS ints, 'x' AS dup, 'y' AS dup`;

  async function run() {
    const { pool } = await testDatabase();
    const client = await pool.connect();
    try {
      await client.query(`SET TimeZone = 'UTC'`);
      const r = await client.query({ text: sql, rowMode: 'array', types: RAW_TYPES });
      return { fields: r.fields, rows: r.rows as Array<Array<string | null>> };
    } finally {
      client.release();
    }
  }

  it('when rows are encoded, then TIMESTAMP is integer microseconds, DATETIME zone-less ISO, numbers numbers, records JSON', async () => {
    const { fields, rows } = await run();
    const [row] = encodeRows(
      fields,
      fields.map((f) => f.name),
      rows,
    );
    assert.deepEqual(row, {
      ts: Date.UTC(2026, 10, 22, 13) * 1000 + 123456,
      dt: '2026-11-22T13:00:00.25',
      dt_whole: '2026-11-22T13:00:00',
      i: 42,
      f: 1.5,
      nan: 'NaN',
      n: 2.5,
      b: true,
      s: 'a "quoted"\\ \u00e9 line\nbreak',
      nothing: null,
      metadata: [{ request: [{ path: '/rest', n: 1, big: Number('12345678901234567890') }] }],
      tss: [Date.UTC(2026, 10, 22) * 1000],
      ints: [1, 2],
      dup: 'y',
    });
  });

  it('when the body is built as text, then it is valid JSON with the same values as encoding the rows', async () => {
    const { fields, rows } = await run();
    const names = fields.map((f) => f.name);
    const body = encodeResultBody(fields, names, [...rows, ...rows]);
    assert.deepEqual(JSON.parse(body), { result: encodeRows(fields, names, [...rows, ...rows]) });
    assert.equal(encodeResultBody(fields, names, []), '{"result":[]}');
  });

  it('when a query answers TIME and JSON values, then TIME is its clock text and JSON its compact text, as BigQuery sends them', async () => {
    await initTranslator();
    const { pool } = await testDatabase();
    const t = translateQuery({
      query: `select time '15:30:00' as t, time '07:05:09.25' as frac, array_agg(time '01:02:03') as ts,
                     parse_json('{"b": [1, null], "a": "x"}') as j, json 'null' as jnull, cast(null as time) as tnull`,
      sources: await loadSources(),
    });
    const r = await pool.query({ text: t.sql, rowMode: 'array', types: RAW_TYPES });
    const body = encodeResultBody(
      r.fields,
      t.columns.map((c) => c.name),
      r.rows as Array<Array<string | null>>,
    );
    assert.deepEqual(JSON.parse(body), {
      result: [{ t: '15:30:00', frac: '07:05:09.25', ts: ['01:02:03'], j: '{"a":"x","b":[1,null]}', jnull: 'null', tnull: null }],
    });
  });

  it('when a query answers RANGE values, then each is BigQuery’s `[start, end)` string, bounds encoded as their type is', async () => {
    await initTranslator();
    const { pool } = await testDatabase();
    const t = translateQuery({
      query: `select range<date> '[2020-01-01, UNBOUNDED)' as d, range<datetime> '[2020-01-01 12:00:00.25, 2020-01-02 00:00:00)' as dt,
                     range<timestamp> '[UNBOUNDED, 2020-10-01 12:00:00+08)' as ts, range<date> '[UNBOUNDED, UNBOUNDED)' as open,
                     generate_range_array(range<date> '[2020-01-01, 2020-01-03)', interval 1 day) as days, cast(null as range<date>) as nothing`,
      sources: await loadSources(),
    });
    const client = await pool.connect();
    try {
      // The session's zone does not change the answer: bounds of a RANGE<TIMESTAMP> are instants.
      await client.query(`SET TimeZone = 'America/Los_Angeles'`);
      const r = await client.query({ text: t.sql, rowMode: 'array', types: RAW_TYPES });
      const body = encodeResultBody(
        r.fields,
        t.columns.map((c) => c.name),
        r.rows as Array<Array<string | null>>,
      );
      assert.deepEqual(JSON.parse(body), {
        result: [
          {
            d: '[2020-01-01, UNBOUNDED)',
            dt: '[2020-01-01T12:00:00.25, 2020-01-02T00:00:00)',
            ts: `[UNBOUNDED, ${Date.UTC(2020, 9, 1, 4) * 1000})`,
            open: '[UNBOUNDED, UNBOUNDED)',
            days: ['[2020-01-01, 2020-01-02)', '[2020-01-02, 2020-01-03)'],
            nothing: null,
          },
        ],
      });
    } finally {
      await client.query('RESET TimeZone');
      client.release();
    }
  });

  it('when a timestamptz has an offset, then microseconds are UTC', () => {
    assert.equal(timestamptzToMicros('2026-11-22 14:30:00.5+01:30'), Date.UTC(2026, 10, 22, 13) * 1000 + 500000);
    assert.equal(timestamptzToMicros('infinity'), 'infinity');
  });
});
