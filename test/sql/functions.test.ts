import { expectTranslation } from '../support/translation.js';

/** Ten rows to aggregate: x = 1..10, s = 'a'/'b', n NULL on odd x. */
const TEN = `with v as (
  select 1 as x, 'a' as s, cast(null as int64) as n union all select 2, 'b', 2 union all select 3, 'a', null union all
  select 4, 'b', 4 union all select 5, 'a', null union all select 6, 'b', 6 union all select 7, 'a', null union all
  select 8, 'b', 8 union all select 9, 'a', null union all select 10, 'b', 10)`;

const TS = `timestamp '2026-03-04 05:06:07.123456'`;

const cases: [name: string, bq: string, rows: Record<string, unknown>[], params?: Record<string, string>][] = [
  [
    'regexp_contains with a regex and with a metacharacter-free literal (strpos)',
    `select regexp_contains('/rest/v1', r'^/re[s]t') as a, regexp_contains('/rest/v1', '/rest') as b, regexp_contains('/auth', '/rest') as c, regexp_contains('a.b', '.') as d`,
    [{ a: true, b: true, c: false, d: true }],
  ],
  [
    'regexp_contains with a parameter: a plain value is found as text, a value with metacharacters as a regex',
    `select regexp_contains('/rest/v1?apikey=x', @plain) as a, regexp_contains('/auth', @plain) as b, regexp_contains('a.b', @dot) as c,
       regexp_contains('ab', @dot) as d, regexp_contains('/rest', @empty) as e, regexp_contains('x]y', @bracket) as f,
       regexp_contains('/rest', @anchored) as g, regexp_contains('x/rest', @anchored) as h, regexp_contains(cast(null as string), @plain) as i,
       regexp_contains('/rest', @missing) as j`,
    [{ a: true, b: false, c: true, d: false, e: true, f: true, g: true, h: false, i: null, j: null }],
    { plain: '/rest', dot: 'a.b', empty: '', bracket: '[]]', anchored: '^/rest' },
  ],
  [
    'regexp_extract returns the group, or the match',
    `select regexp_extract('user=42;', r'user=(\\d+)') as a, regexp_extract('abc123', r'\\d+') as b, regexp_extract('abc', r'\\d') as c`,
    [{ a: '42', b: '123', c: null }],
  ],
  [
    'starts_with / ends_with',
    `select starts_with('hello', 'he') as a, ends_with('hello', 'lo') as b, ends_with('hello', 'he') as c`,
    [{ a: true, b: true, c: false }],
  ],
  [
    'countif, count(distinct), count(*), count(x)',
    `${TEN} select countif(x > 7) as a, count(distinct s) as b, count(*) as c, count(n) as d from v`,
    [{ a: 3, b: 2, c: 10, d: 5 }],
  ],
  [
    'sum / avg / min / max',
    `${TEN} select sum(x) as a, avg(x) as b, min(s) as c, max(x) as d, sum(n) as e from v`,
    [{ a: 55, b: 5.5, c: 'a', d: 10, e: 30 }],
  ],
  [
    'coalesce, ifnull, if, safe_divide',
    `select coalesce(null, 'x') as a, ifnull(null, 3) as b, if(1 < 2, 'y', 'n') as c, safe_divide(1, 0) as d, safe_divide(3, 2) as e`,
    [{ a: 'x', b: 3, c: 'y', d: null, e: 1.5 }],
  ],
  [
    'concat is NULL when an argument is NULL',
    `select concat('a', 'b', 'c') as a, concat('a', null) as b, concat('n', 1) as c, 'x' || 'y' as d`,
    [{ a: 'abc', b: null, c: 'n1', d: 'xy' }],
  ],
  ['lower / upper / length', `select lower('AbC') as a, upper('AbC') as b, length('héllo') as c`, [{ a: 'abc', b: 'ABC', c: 5 }]],
  [
    'timestamp_trunc to minute, hour, day, week, month',
    `select timestamp_trunc(${TS}, minute) as a, timestamp_trunc(${TS}, hour) as b, timestamp_trunc(${TS}, day) as c, timestamp_trunc(${TS}, week) as d, timestamp_trunc(${TS}, month) as e`,
    [
      {
        a: '2026-03-04T05:06:00.000Z',
        b: '2026-03-04T05:00:00.000Z',
        c: '2026-03-04T00:00:00.000Z',
        d: '2026-03-01T00:00:00.000Z',
        e: '2026-03-01T00:00:00.000Z',
      },
    ],
  ],
  [
    'timestamp_sub / timestamp_add',
    `select timestamp_sub(${TS}, interval 7 day) as a, timestamp_add(${TS}, interval 2 hour) as b`,
    [{ a: '2026-02-25T05:06:07.123Z', b: '2026-03-04T07:06:07.123Z' }],
  ],
  [
    'current_timestamp is now',
    `select timestamp_diff(current_timestamp(), current_timestamp, second) as a, current_timestamp() > timestamp '2026-01-01' as b`,
    [{ a: 0, b: true }],
  ],
  [
    'datetime(ts, "UTC") and timestamp("…")',
    `select datetime(${TS}, 'UTC') as a, timestamp('2026-01-02T03:04:05+02:00') as b, timestamp('2026-01-02 03:04:05') as c`,
    [{ a: '2026-03-04T05:06:07.123456', b: '2026-01-02T01:04:05.000Z', c: '2026-01-02T03:04:05.000Z' }],
  ],
  [
    'parse_timestamp / format_timestamp',
    `select parse_timestamp('%Y-%m-%d %H:%M:%S', '2026-01-02 03:04:05') as a, format_timestamp('%Y-%m-%dT%H:%M:%SZ', ${TS}) as b, format_timestamp('%F %T', ${TS}) as c`,
    [{ a: '2026-01-02T03:04:05.000Z', b: '2026-03-04T05:06:07Z', c: '2026-03-04 05:06:07' }],
  ],
  [
    'unix_micros / millis / seconds',
    `select unix_micros(${TS}) as a, unix_millis(${TS}) as b, unix_seconds(${TS}) as c`,
    [{ a: 1772600767123456, b: 1772600767123, c: 1772600767 }],
  ],
  [
    'timestamp_micros / millis / seconds',
    `select timestamp_micros(1772600767123456) as a, timestamp_millis(1772600767123) as b, timestamp_seconds(1772600767) as c, timestamp_seconds(@s) as d`,
    [{ a: '2026-03-04T05:06:07.123Z', b: '2026-03-04T05:06:07.123Z', c: '2026-03-04T05:06:07.000Z', d: '2026-03-04T05:06:07.000Z' }],
    { s: '1772600767' },
  ],
  [
    'extract',
    `select extract(hour from ${TS}) as a, extract(dayofweek from ${TS}) as b, extract(millisecond from ${TS}) as c, extract(year from ${TS}) as d, extract(date from ${TS}) as e`,
    [{ a: 5, b: 4, c: 123, d: 2026, e: '2026-03-04' }],
  ],
  [
    'json_value / json_query',
    `select json_value('{"a": {"b": [1, "x"]}}', '$.a.b[1]') as a, json_value('{"a": {"b": 1}}', '$.a') as b, json_query('{"a": {"b": 1}}', '$.a') as c`,
    [{ a: 'x', b: null, c: '{"b":1}' }],
  ],
  [
    'json functions over text that is not JSON give NULL, not an error',
    `select json_value('GET /rest/v1/x', '$.a') as a, json_query('{broken', '$') as b, json_extract_scalar('', '$.a') as c, json_value(cast(null as string), '$.a') as d`,
    [{ a: null, b: null, c: null, d: null }],
  ],
  [
    'approx_quantiles(x, 100)[OFFSET(50)] and array indexing',
    `${TEN} select approx_quantiles(x, 100)[offset(50)] as a, approx_quantiles(x, 4)[offset(0)] as b, approx_quantiles(x, 4)[safe_offset(9)] as c from v`,
    [{ a: 5, b: 1, c: null }],
  ],
  [
    'stddev / variance and their _samp / _pop forms',
    `${TEN} select round(stddev(x), 6) as a, round(stddev_samp(x), 6) as b, round(stddev_pop(x), 6) as c, round(variance(x), 6) as d, round(var_samp(x), 6) as e, var_pop(x) as f, stddev(n) > 0 as g from v`,
    [{ a: 3.02765, b: 3.02765, c: 2.872281, d: 9.166667, e: 9.166667, f: 8.25, g: true }],
  ],
  [
    'var_samp(DISTINCT …) over the distinct values; stddev_pop as a running window',
    `${TEN} select var_samp(distinct if(x > 2, 1, 0)) as a, round(var_samp(if(x > 2, 1, 0)), 4) as b from v`,
    [{ a: 0.5, b: 0.1778 }],
  ],
  [
    'stddev_pop over a ROWS frame',
    `${TEN} select x, stddev_pop(x) over (order by x rows between 1 preceding and current row) as s from v order by x limit 3`,
    [
      { x: 1, s: 0 },
      { x: 2, s: 0.5 },
      { x: 3, s: 0.5 },
    ],
  ],
  [
    'corr / covar_pop / covar_samp over the pairs without NULL',
    `${TEN} select corr(x, n) as a, covar_pop(x, n) as b, covar_samp(x, n) as c, corr(x, 0 - x) as d from v`,
    [{ a: 1, b: 8, c: 10, d: -1 }],
  ],
  [
    'logical_and / logical_or skip NULLs',
    `${TEN} select logical_and(x > 0) as a, logical_or(x > 9) as b, logical_and(n > 2) as c, logical_or(n > 100) as d from v`,
    [{ a: true, b: true, c: false, d: false }],
  ],
  [
    'bit_and / bit_or',
    `${TEN} select bit_and(x) as a, bit_or(x) as b, bit_or(n) as c, bit_and(distinct x * 0 + 6) as d from v`,
    [{ a: 0, b: 15, c: 14, d: 6 }],
  ],
  ['any_value skips NULLs', `${TEN} select any_value(n) is not null as a from v`, [{ a: true }]],
  [
    'array_agg with ORDER BY and [OFFSET] / [ORDINAL]',
    `${TEN} select array_agg(x order by x desc)[offset(0)] as a, array_agg(x order by x)[ordinal(2)] as b from v`,
    [{ a: 10, b: 2 }],
  ],
  ['string_agg with delimiter and order', `${TEN} select string_agg(distinct s, '|' order by s) as a from v`, [{ a: 'a|b' }]],
  [
    'regexp_replace / trim / replace / substr / split',
    `select regexp_replace('a1b22', r'\\d+', '#') as a, trim('  x ') as b, replace('aXbX', 'X', '-') as c, substr('hello', 2, 3) as d, split('a,b,c')[offset(1)] as e`,
    [{ a: 'a#b#', b: 'x', c: 'a-b-', d: 'ell', e: 'b' }],
  ],
  [
    'nullif / abs / round / floor / ceil / greatest / least',
    `select nullif(1, 1) as a, abs(-3) as b, round(2.5) as c, round(1.2345, 2) as d, floor(1.7) as e, ceil(1.2) as f, greatest(1, 5, 3) as g, least(4, 2) as h`,
    [{ a: null, b: 3, c: 3, d: 1.23, e: 1, f: 2, g: 5, h: 2 }],
  ],
  [
    'date / datetime_trunc / date_trunc / current_date / current_datetime',
    `select date(${TS}) as a, datetime_trunc(datetime(${TS}), hour) as b, date_trunc(date '2026-03-18', month) as c,
      current_date() = date(current_timestamp()) as d, current_datetime() <= datetime(current_timestamp(), 'UTC') as e, timestamp('2026-01-02 03:04:05', 'America/New_York') as f`,
    [{ a: '2026-03-04', b: '2026-03-04T05:00:00', c: '2026-03-01', d: true, e: true, f: '2026-01-02T08:04:05.000Z' }],
  ],
  ['dates[0]: a one-column CTE indexed like an array', `with dates as (select 41 + 1 as start) select dates[0] as a`, [{ a: 42 }]],
];

describe('functions', () => {
  for (const [name, bq, rows, params] of cases) {
    it(`when ${name}, then the rows match BigQuery`, async () => {
      await expectTranslation(bq, { params }).toReturn(rows);
    });
  }
});
