/** STRUCT values, array constructors, IN UNNEST and table aliases as values, run on Postgres. */
import assert from 'node:assert/strict';
import { SqlNameError, SqlUnsupportedError } from '../../src/sql/index.js';
import { insertEvents } from '../support/db.js';
import { expectTranslation, runTranslation, inLastHour } from '../support/translation.js';

const P = 'sqltest-structs';
const src = '`deno-relay-logs`';
const ts = (second: number) => inLastHour(second * 1000);

describe('STRUCT and arrays', () => {
  before(async () => {
    await insertEvents('deno-relay-logs', [
      {
        project: P,
        timestamp: ts(1),
        event_message: 'one',
        metadata: { request: { method: 'GET', pathname: '/a' }, response: { status_code: 200 } },
      },
      {
        project: P,
        timestamp: ts(2),
        event_message: 'two',
        metadata: { request: { method: 'POST', pathname: '/b' }, response: { status_code: 500 } },
      },
      {
        project: P,
        timestamp: ts(3),
        event_message: 'three',
        metadata: { request: { method: 'GET', pathname: '/c' }, response: { status_code: 404 } },
      },
    ]);
  });

  it('when STRUCT(…) names fields by AS, by path and by position, then the row holds a JSON object', async () => {
    const t =
      await expectTranslation(`select struct(1 as x, 'a' as y) as s, (2, 'b') as tup, struct(t.event_message, t.timestamp > timestamp '2000-01-01' as recent) as named
        from ${src} t where t.project = '${P}' and t.event_message = 'one'`).toReturn([
        { s: { x: 1, y: 'a' }, tup: { _field_1: 2, _field_2: 'b' }, named: { event_message: 'one', recent: true } },
      ]);
    assert.equal(t.columns[0].type, 'STRUCT<x INT64, y STRING>');
  });

  it('when a field of a STRUCT is read back, then it keeps its type (INT64 compares as a number, TIMESTAMP as a time)', async () => {
    await expectTranslation(`with s as (select struct(t.timestamp as ts, 9 as n, 2.5 as f, true as b, null as z) as v from ${src} t where t.project = '${P}' and t.event_message = 'two')
        select v.n + 1 as n, v.n > 10 as big, v.f * 2 as f, v.b as b, v.z as z, v.ts as ts, v.ts > timestamp '2000-01-01' as later, timestamp_trunc(v.ts, day) <= v.ts as truncs from s`).toReturn(
      [{ n: 10, big: false, f: 5, b: true, z: null, ts: ts(2), later: true, truncs: true }],
    );
  });

  it('when STRUCT<…> declares field types, then values are cast and field access works on the literal', async () => {
    await expectTranslation(
      `select struct<x int64, y string, z struct<w float64>>(1, 'a', struct(2 as w)) as s, struct(7 as x).x as seven, struct<a timestamp>('2024-01-02 03:04:05').a as t`,
    ).toReturn([{ s: { x: 1, y: 'a', z: { w: 2 } }, seven: 7, t: '2024-01-02T03:04:05.000Z' }]);
  });

  it('when STRUCT field names repeat or are unknown, then a clear error', async () => {
    await expectTranslation(`select struct(1 as x, 2 as x) as s`).toFail(SqlUnsupportedError, /used twice/);
    await expectTranslation(`select struct(1 as x).y as s`).toFail(SqlNameError, /unknown field y/);
  });

  it('when ARRAY_AGG collects STRUCTs in order with LIMIT, then a JSON array of the first n objects', async () => {
    await expectTranslation(`select array_agg(struct(r.method, r.pathname as path) order by t.timestamp desc limit 2) as calls, array_agg(r.method order by t.timestamp limit 2) as methods
        from ${src} t cross join unnest(t.metadata) m cross join unnest(m.request) r where t.project = '${P}'`).toReturn([
      {
        calls: [
          { method: 'GET', path: '/c' },
          { method: 'POST', path: '/b' },
        ],
        methods: ['GET', 'POST'],
      },
    ]);
  });

  it('when an array of STRUCTs from a CTE is unnested, then each field comes back typed', async () => {
    await expectTranslation(`with agg as (select array_agg(struct(r.status_code as code, t.timestamp as seen)) as rs from ${src} t cross join unnest(t.metadata) m cross join unnest(m.response) r where t.project = '${P}')
        select x.code, x.seen from agg cross join unnest(agg.rs) as x where x.code >= 404 order by x.code`).toReturn([
      { code: 404, seen: ts(3) },
      { code: 500, seen: ts(2) },
    ]);
  });

  it('when array literals are built, indexed, measured and unnested, then BigQuery values', async () => {
    await expectTranslation(`select [1, 2, 3] as a, array<string>['x', null] as b, [1, 2, 3][offset(1)] as second, [1, 2][safe_offset(9)] as missing,
        array_length([1, 2, 3]) as n, array_length(cast([] as array<int64>)) as empty`).toFail(SqlUnsupportedError, /CAST to array/i);
    await expectTranslation(`select [1, 2, 3] as a, array<string>['x', null] as b, [1, 2, 3][offset(1)] as second, [1, 2][safe_offset(9)] as missing,
        array_length([1, 2, 3]) as n, array_length(array<int64>[]) as empty, array_length([struct(1 as a)]) as structs, [struct(1 as a), struct(2 as a)] as objs`).toReturn(
      [{ a: [1, 2, 3].map(String), b: ['x', null], second: 2, missing: null, n: 3, empty: 0, structs: 1, objs: [{ a: 1 }, { a: 2 }] }],
    );
    await expectTranslation(
      `select x, ts from unnest([1, 5, 3]) as x cross join unnest([timestamp '2024-01-01 00:00:00']) as ts where x > 1 order by x`,
    ).toReturn([
      { x: 3, ts: '2024-01-01T00:00:00.000Z' },
      { x: 5, ts: '2024-01-01T00:00:00.000Z' },
    ]);
  });

  it('when IN UNNEST tests membership, then NULL and empty arrays behave as in BigQuery', async () => {
    await expectTranslation(`select 2 in unnest([1, 2]) as yes, 3 in unnest([1, 2]) as absent, 3 in unnest([1, null]) as unknown, 3 not in unnest([1, 2]) as notin,
        cast(null as int64) in unnest(array<int64>[]) as empty, 'b' in unnest(split('a,b')) as split`).toReturn([
      { yes: true, absent: false, unknown: null, notin: true, empty: false, split: true },
    ]);
    await expectTranslation(`select t.event_message from ${src} t cross join unnest(t.metadata) m cross join unnest(m.request) r
        where t.project = '${P}' and r.method in unnest(['POST', 'PUT']) order by t.timestamp`).toReturn([{ event_message: 'two' }]);
  });

  it('when ARRAY(SELECT …) collects a subquery, then its rows in order, and an empty result is an empty array', async () => {
    await expectTranslation(`select array(select t.event_message from ${src} t where t.project = '${P}' order by t.timestamp desc) as msgs,
        array(select t.event_message from ${src} t where t.project = 'none') as none,
        array(select struct(t.event_message as m) from ${src} t where t.project = '${P}' order by t.timestamp limit 1) as objs`).toReturn([
      { msgs: ['three', 'two', 'one'], none: [], objs: [{ m: 'one' }] },
    ]);
  });

  it('when a table alias is selected, then the row is one STRUCT column named after the alias', async () => {
    const t = await expectTranslation(
      `with c as (select event_message, 5 as n from ${src} where project = '${P}') select c from c order by c.event_message limit 1`,
    ).toReturn([{ c: { event_message: 'one', n: 5 } }]);
    assert.deepEqual(t.columns, [{ name: 'c', type: 'STRUCT<event_message STRING, n INT64>' }]);
    const { rows, translation } = await runTranslation(
      `select e, e.id as eid from ${src} e where e.project = '${P}' and e.event_message = 'two'`,
    );
    assert.deepEqual(rows, [
      {
        e: {
          id: rows[0].eid,
          timestamp: ts(2).replace('.000Z', '+00:00'),
          event_message: 'two',
          project: P,
          metadata: [{ request: [{ method: 'POST', pathname: '/b' }], response: [{ status_code: 500 }] }],
        },
        eid: rows[0].eid,
      },
    ]);
    const e = translation;
    assert.equal(e.columns[0].name, 'e');
  });

  it('when a STRUCT of a row is read back, then its columns keep their types', async () => {
    await expectTranslation(
      `with c as (select e from ${src} e where e.project = '${P}') select c.e.timestamp = timestamp '${ts(1)}' as first, c.e.event_message as m from c order by c.e.timestamp limit 1`,
    ).toReturn([{ first: true, m: 'one' }]);
  });
});
