/**
 * Aggregate, approximate, statistical, navigation and window functions, each row one of BigQuery's
 * documented examples (GoogleSQL's reference, from which BigQuery's is generated: the google/zetasql repository, its docs folder),
 * run on Postgres and compared with the documented result. The approximate ones are computed exactly.
 */
import { SqlSyntaxError, SqlUnsupportedError } from '../../src/sql/errors.js';
import { expectTranslation } from '../support/translation.js';

const cases: [name: string, bq: string, rows: Record<string, unknown>[]][] = [
  [
    'APPROX_COUNT_DISTINCT',
    `select approx_count_distinct(x) as approx_distinct from unnest([0, 1, 1, 2, 3, 5]) as x`,
    [{ approx_distinct: 5 }],
  ],
  [
    'APPROX_TOP_COUNT, NULL counted as a value',
    `select approx_top_count(x, 2) as a from unnest(["apple", "apple", "pear", "pear", "pear", "banana"]) as x
     union all select approx_top_count(x, 2) from unnest([null, "pear", "pear", "pear", "apple", null]) as x`,
    [
      {
        a: [
          { value: 'pear', count: 3 },
          { value: 'apple', count: 2 },
        ],
      },
      {
        a: [
          { value: 'pear', count: 3 },
          { value: null, count: 2 },
        ],
      },
    ],
  ],
  [
    'APPROX_TOP_COUNT elements read back as typed STRUCT fields',
    `select t.value, t.count from unnest((select approx_top_count(x, 1) from unnest([3, 3, 4]) as x)) as t`,
    [{ value: 3, count: 2 }],
  ],
  [
    'APPROX_TOP_SUM',
    `select approx_top_sum(x, weight, 2) as a from unnest([struct("apple" as x, 3 as weight), ("pear", 2), ("apple", 0), ("banana", 5), ("pear", 4)])`,
    [
      {
        a: [
          { value: 'pear', sum: 6 },
          { value: 'banana', sum: 5 },
        ],
      },
    ],
  ],
  [
    'CORR, COVAR_POP and STDDEV_POP over an UNNEST of STRUCTs (the later STRUCTs take the first one field names)',
    `select corr(y, x) as c, stddev_pop(y) as s from unnest([struct(1.0 as y, 5.0 as x), (3.0, 9.0), (4.0, null)])`,
    [{ c: 1, s: 1.247219128924647 }],
  ],
  ['STDDEV_POP of INT64', `select stddev_pop(x) as results from unnest([10, 14, 18]) as x`, [{ results: 3.265986323710904 }]],
  [
    'SUM and AVG over an empty UNNEST are NULL',
    `select sum(x) as s, avg(x) as a, count(x) as c from unnest([]) as x`,
    [{ s: null, a: null, c: 0 }],
  ],
  ['BIT_XOR', `select bit_xor(x) as bit_xor from unnest([5678, 1234]) as x`, [{ bit_xor: 4860 }]],
  [
    'ARRAY_AGG IGNORE NULLS, with ORDER BY and LIMIT',
    `select array_to_string(array(select cast(v as string) from unnest((select array_agg(x ignore nulls) from unnest([null, 1, -2, 3, -2, 1, null]) as x)) as v), ',') as a,
            array_to_string(array(select cast(v as string) from unnest((select array_agg(x ignore nulls order by x desc limit 2) from unnest([null, 1, -2, 3, -2, 1, null]) as x)) as v), ',') as b`,
    [{ a: '1,-2,3,-2,1', b: '3,1' }],
  ],
  [
    'STRING_AGG with ORDER BY and LIMIT',
    `select string_agg(fruit, " & " order by length(fruit) limit 2) as string_agg from unnest(["apple", null, "pear", "banana", "pear"]) as fruit`,
    [{ string_agg: 'pear & pear' }],
  ],
  [
    'PERCENTILE_CONT over the partition, NULLs ignored',
    `select percentile_cont(x, 0) over () as min, percentile_cont(x, 0.01) over () as percentile1, percentile_cont(x, 0.5) over () as median,
            percentile_cont(x, 0.9) over () as percentile90, percentile_cont(x, 1) over () as max
     from unnest([0, 3, null, 1, 2]) as x limit 1`,
    [{ min: 0, percentile1: 0.03, median: 1.5, percentile90: 2.7, max: 3 }],
  ],
  [
    'PERCENTILE_DISC over the partition',
    `select x, percentile_disc(x, 0) over () as min, percentile_disc(x, 0.5) over () as median, percentile_disc(x, 1) over () as max
     from unnest(['c', null, 'b', 'a']) as x order by x nulls last`,
    [
      { x: 'a', min: 'a', median: 'b', max: 'c' },
      { x: 'b', min: 'a', median: 'b', max: 'c' },
      { x: 'c', min: 'a', median: 'b', max: 'c' },
      { x: null, min: 'a', median: 'b', max: 'c' },
    ],
  ],
  [
    'ARRAY_CONCAT_AGG, NULL arrays skipped and NULL elements kept',
    `SELECT ARRAY_CONCAT_AGG(x) AS array_concat_agg FROM (
       SELECT [NULL, 1, 2, 3, 4] AS x UNION ALL SELECT NULL UNION ALL SELECT [5, 6] UNION ALL SELECT [7, 8, 9])`,
    [{ array_concat_agg: [null, '1', '2', '3', '4', '5', '6', '7', '8', '9'] }],
  ],
  [
    'ARRAY_CONCAT_AGG ordered by the arrays’ lengths',
    `SELECT ARRAY_CONCAT_AGG(x ORDER BY ARRAY_LENGTH(x)) AS array_concat_agg FROM (
       SELECT [1, 2, 3, 4] AS x UNION ALL SELECT [5, 6] UNION ALL SELECT [7, 8, 9])`,
    [{ array_concat_agg: ['5', '6', '7', '8', '9', '1', '2', '3', '4'] }],
  ],
  [
    'ARRAY_CONCAT_AGG of no rows, or of NULLs only, and per group',
    `SELECT g, ARRAY_CONCAT_AGG(x ORDER BY o) AS a FROM (
       SELECT 1 AS g, IF(FALSE, ['z'], NULL) AS x, 1 AS o UNION ALL SELECT 2, ['b'], 2 UNION ALL SELECT 2, ['a'], 1 UNION ALL SELECT 2, ARRAY<STRING>[], 3)
     GROUP BY g ORDER BY g`,
    [
      { g: 1, a: null },
      { g: 2, a: ['a', 'b'] },
    ],
  ],
  [
    'MAX_BY and MIN_BY (ANY_VALUE(x HAVING MAX y))',
    `WITH fruits AS (SELECT "apple" fruit, 3.55 price UNION ALL SELECT "banana" fruit, 2.10 price UNION ALL SELECT "pear" fruit, 4.30 price)
     SELECT MAX_BY(fruit, price) AS max_fruit, MIN_BY(fruit, price) AS min_fruit FROM fruits`,
    [{ max_fruit: 'pear', min_fruit: 'banana' }],
  ],
  [
    'MAX_BY skips NULL orderings, answers NULL when the greatest rows hold only NULL, and groups',
    `SELECT g, MAX_BY(x, y) AS mx, MIN_BY(x, y) AS mn FROM (
       SELECT 1 AS g, 'a' AS x, 1 AS y UNION ALL SELECT 1, 'b', NULL UNION ALL SELECT 1, 'c', 3 UNION ALL SELECT 1, NULL, 3
       UNION ALL SELECT 2, 'd', 5 UNION ALL SELECT 2, NULL, 9 UNION ALL SELECT 3, 'e', NULL)
     GROUP BY g ORDER BY g`,
    [
      { g: 1, mx: 'c', mn: 'a' },
      { g: 2, mx: null, mn: 'd' },
      { g: 3, mx: null, mn: null },
    ],
  ],
];

describe('library: aggregates and windows', () => {
  for (const [name, bq, rows] of cases) {
    it(`when ${name}, then the documented result`, async () => {
      await expectTranslation(`SELECT ARRAY_CONCAT_AGG(x LIMIT 2) FROM UNNEST([1, 2]) x`).toFail(
        SqlUnsupportedError,
        /ARRAY_CONCAT_AGG … LIMIT is not supported/,
      );
      await expectTranslation(`SELECT ARRAY_CONCAT_AGG(x) FROM UNNEST([1, 2]) x`).toFail(
        SqlSyntaxError,
        /ARRAY_CONCAT_AGG takes an ARRAY as argument 1/,
      );
      await expectTranslation(`SELECT MAX_BY(x, [x]) FROM UNNEST([1, 2]) x`).toFail(
        SqlSyntaxError,
        /MAX_BY orders by a value, not an ARRAY or STRUCT/,
      );
      await expectTranslation(bq).toReturn(rows);
    });
  }

  it('when FIRST_VALUE / LAST_VALUE / NTH_VALUE skip NULLs, then they read the frame non-NULL values', async () => {
    const frame = 'over (order by o rows between 1 preceding and 1 following)';
    await expectTranslation(
      `select o, first_value(x ignore nulls) ${frame} as f, last_value(x ignore nulls) ${frame} as l, nth_value(x, 2 ignore nulls) ${frame} as n,
              first_value(x respect nulls) ${frame} as r
       from unnest([null, 2, null, 4, 5]) as x with offset as o order by o`,
    ).toReturn([
      { o: 0, f: 2, l: 2, n: null, r: null },
      { o: 1, f: 2, l: 2, n: null, r: null },
      { o: 2, f: 2, l: 4, n: 4, r: 2 },
      { o: 3, f: 4, l: 5, n: 5, r: null },
      { o: 4, f: 4, l: 5, n: 5, r: 4 },
    ]);
  });

  it('when IGNORE NULLS, ORDER BY in OVER or a bad count is given where BigQuery refuses it, then a 400 naming the call', async () => {
    await expectTranslation(`select sum(x ignore nulls) as s from unnest([1]) as x`).toFail(
      SqlSyntaxError,
      /SUM does not take IGNORE NULLS/,
    );
    await expectTranslation(`select percentile_cont(x, 0.5) over (order by x) as p from unnest([1]) as x`).toFail(
      SqlSyntaxError,
      /PERCENTILE_CONT takes no ORDER BY/,
    );
    await expectTranslation(`select approx_top_count(x, 0) as p from unnest([1]) as x`).toFail(SqlUnsupportedError, /positive integer/);
    await expectTranslation(`select approx_top_sum(x, 'a', 1) as p from unnest([1]) as x`).toFail(
      SqlUnsupportedError,
      /weights must be numbers/,
    );
  });
});
