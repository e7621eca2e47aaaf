/**
 * BigQuery's mathematical, conditional and bit functions against the examples of its reference
 * (GoogleSQL's mathematical_functions.md, conditional_expressions.md, bit_functions.md):
 * each query translated and run on Postgres; the expected rows are the reference's (values it
 * prints cut short are compared cut to the digits it prints).
 */
import assert from 'node:assert/strict';
import { expectTranslation, runTranslation } from '../support/translation.js';
import { SqlSyntaxError } from '../../src/sql/errors.js';

type Row = Record<string, unknown>;
const INF = `CAST('inf' AS FLOAT64)`;
const NEG_INF = `CAST('-inf' AS FLOAT64)`;
const NAN = `CAST('nan' AS FLOAT64)`;

const examples: [name: string, bq: string, rows: Row[]][] = [
  ['ABS', `SELECT ABS(25) AS a, ABS(-25) AS b, ABS(${INF}) AS c, ABS(${NEG_INF}) AS d`, [{ a: 25, b: 25, c: Infinity, d: Infinity }]],
  [
    'SIGN',
    `SELECT SIGN(25) AS a, SIGN(0) AS b, SIGN(-25) AS c, SIGN(${NAN}) AS d, SIGN(-2.5) AS e`,
    [{ a: 1, b: 0, c: -1, d: NaN, e: -1 }],
  ],
  [
    'IS_INF, IS_NAN',
    `SELECT IS_INF(${INF}) AS a, IS_INF(${NEG_INF}) AS b, IS_INF(25) AS c, IS_NAN(${NAN}) AS d, IS_NAN(25) AS e`,
    [{ a: true, b: true, c: false, d: true, e: false }],
  ],
  [
    'IEEE_DIVIDE',
    `SELECT IEEE_DIVIDE(20.0, 4.0) AS a, IEEE_DIVIDE(0.0, 25.0) AS b, IEEE_DIVIDE(25.0, 0.0) AS c, IEEE_DIVIDE(-25.0, 0.0) AS d,
       IEEE_DIVIDE(0.0, 0.0) AS e, IEEE_DIVIDE(0.0, ${NAN}) AS f, IEEE_DIVIDE(${NAN}, 0.0) AS g, IEEE_DIVIDE(${INF}, ${INF}) AS h`,
    [{ a: 5, b: 0, c: Infinity, d: -Infinity, e: NaN, f: NaN, g: NaN, h: NaN }],
  ],
  [
    'SQRT, CBRT, EXP, LN, LOG10, LOG',
    `SELECT SQRT(25.0) AS a, SQRT(${INF}) AS b, CBRT(27) AS c, EXP(0.0) AS d, EXP(${NEG_INF}) AS e, LN(1.0) AS f, LN(${INF}) AS g,
       LOG10(100.0) AS h, LOG10(${INF}) AS i, LOG(100.0, 10.0) AS j, LOG(${INF}, 2) AS k`,
    [{ a: 5, b: Infinity, c: 3.0000000000000004, d: 1, e: 0, f: 0, g: Infinity, h: 2, i: Infinity, j: 2, k: Infinity }],
  ],
  [
    'POW, POWER',
    `SELECT POW(2.0, 3.0) AS a, POWER(1.0, ${NAN}) AS b, POW(${NAN}, 0) AS c, POW(-1.0, ${INF}) AS d, POW(0.5, ${NEG_INF}) AS e,
       POW(2.0, ${NEG_INF}) AS f, POW(${INF}, -1) AS g, POW(2, 3) AS h`,
    [{ a: 8, b: 1, c: 1, d: 1, e: Infinity, f: 0, g: 0, h: 8 }],
  ],
  [
    'trigonometric functions at ±inf and NaN',
    `SELECT SIN(${INF}) AS a, COS(${NEG_INF}) AS b, TAN(${NAN}) AS c, ASIN(${NAN}) AS d, ATAN(${INF}) AS e, ASINH(${NEG_INF}) AS f,
       ACOSH(${INF}) AS g, TANH(${INF}) AS h, COSH(${NEG_INF}) AS i, SINH(${NEG_INF}) AS j, ATAN2(0.0, 0.0) AS k`,
    [{ a: NaN, b: NaN, c: NaN, d: NaN, e: Math.PI / 2, f: -Infinity, g: Infinity, h: 1, i: Infinity, j: -Infinity, k: 0 }],
  ],
  [
    'COT, COTH, CSC, CSCH, SEC, SECH and their SAFE. forms at 0',
    `SELECT COT(1) AS a, SAFE.COT(0) AS b, TRUNC(COTH(1), 12) AS c, SAFE.COTH(0) AS d, TRUNC(CSC(100), 11) AS e, TRUNC(CSC(-1), 12) AS f,
       SAFE.CSC(0) AS g, TRUNC(CSCH(0.5), 12) AS h, TRUNC(CSCH(-2), 11) AS i, SAFE.CSCH(0) AS j, ROUND(SEC(100), 12) AS k, TRUNC(SEC(-1), 11) AS l,
       TRUNC(SECH(0.5), 11) AS m, TRUNC(SECH(-2), 12) AS n`,
    [
      {
        a: 0.64209261593433065,
        b: null,
        c: 1.313035285499,
        d: null,
        e: -1.97485753142,
        f: -1.188395105778,
        g: null,
        h: 1.919034751334,
        i: -0.27572056477,
        j: null,
        k: 1.159663822905,
        l: 1.85081571768,
        m: 0.88681888397,
        n: 0.265802228834,
      },
    ],
  ],
  [
    'CEIL, CEILING, FLOOR, ROUND, TRUNC',
    `SELECT CEIL(2.3) AS a, CEIL(-2.5) AS b, CEILING(2.8) AS c, FLOOR(2.8) AS d, FLOOR(-2.5) AS e, ROUND(2.5) AS f, ROUND(-2.5) AS g,
       ROUND(${INF}) AS h, ROUND(${NAN}) AS i, ROUND(123.7, -1) AS j, ROUND(1.235, 2) AS k, TRUNC(2.8) AS l, TRUNC(-2.5) AS m, TRUNC(${NEG_INF}) AS n,
       CEIL(${NAN}) AS o, FLOOR(${INF}) AS p`,
    [{ a: 3, b: -2, c: 3, d: 2, e: -3, f: 3, g: -3, h: Infinity, i: NaN, j: 120, k: 1.24, l: 2, m: -2, n: -Infinity, o: NaN, p: Infinity }],
  ],
  [
    'DIV, MOD',
    `SELECT DIV(20, 4) AS a, DIV(12, -7) AS b, DIV(20, 3) AS c, DIV(0, 20) AS d, MOD(25, 12) AS e, MOD(-25, 12) AS f`,
    [{ a: 5, b: -1, c: 6, d: 0, e: 1, f: -1 }],
  ],
  [
    'GREATEST, LEAST: NULL when any argument is NULL',
    `SELECT GREATEST(3, 5, 1) AS a, LEAST(3, 5, 1) AS b, GREATEST(3, NULL, 1) AS c, LEAST(3, NULL, 1) AS d, LEAST(1.0, ${NAN}) AS e, GREATEST('a', 'b') AS f`,
    [{ a: 5, b: 1, c: null, d: null, e: NaN, f: 'b' }],
  ],
  [
    'SAFE_ADD, SAFE_SUBTRACT, SAFE_MULTIPLY, SAFE_NEGATE, SAFE_DIVIDE: NULL on overflow',
    `SELECT SAFE_ADD(5, 4) AS a, SAFE_SUBTRACT(5, 4) AS b, SAFE_MULTIPLY(20, 4) AS c, SAFE_NEGATE(1) AS d, SAFE_NEGATE(-1) AS e, SAFE_NEGATE(0) AS f,
       SAFE_DIVIDE(20, 4) AS g, SAFE_DIVIDE(0, 20) AS h, SAFE_DIVIDE(20, 0) AS i, SAFE_ADD(9223372036854775807, 1) AS j,
       SAFE_MULTIPLY(9223372036854775807, 2) AS k, SAFE_NEGATE(-9223372036854775807 - 1) AS l, SAFE_ADD(1.5, 1) AS m`,
    [{ a: 9, b: 1, c: 80, d: -1, e: 1, f: 0, g: 5, h: 0, i: null, j: null, k: null, l: null, m: 2.5 }],
  ],
  [
    'RANGE_BUCKET',
    `WITH students AS (SELECT 9 AS age UNION ALL SELECT 20 UNION ALL SELECT 25 UNION ALL SELECT 31 UNION ALL SELECT 32 UNION ALL SELECT 33)
     SELECT RANGE_BUCKET(age, [10, 20, 30]) AS age_group, COUNT(*) AS count FROM students GROUP BY 1 ORDER BY 1`,
    [
      { age_group: 0, count: 1 },
      { age_group: 2, count: 2 },
      { age_group: 3, count: 3 },
    ],
  ],
  [
    'RANGE_BUCKET of the reference',
    `SELECT RANGE_BUCKET(20, [0, 10, 20, 30, 40]) AS a, RANGE_BUCKET(20, [0, 10, 20, 20, 40, 40]) AS b, RANGE_BUCKET(25, []) AS c, RANGE_BUCKET(NULL, [0, 10]) AS d`,
    [{ a: 3, b: 4, c: 0, d: null }],
  ],
  [
    'BIT_COUNT',
    `SELECT BIT_COUNT(0) AS a, BIT_COUNT(5) AS b, BIT_COUNT(-1) AS c, BIT_COUNT(NULL) AS d, BIT_COUNT(-9223372036854775807 - 1) AS e`,
    [{ a: 0, b: 2, c: 64, d: null, e: 1 }],
  ],
  [
    'COALESCE, IF, IFNULL, NULLIF, NULLIFZERO, ZEROIFNULL',
    `SELECT COALESCE(NULL, 'B', 'C') AS a, IF(2 > 1, 'yes', 'no') AS b, IFNULL(NULL, 0) AS c, IFNULL(10, 0) AS d, NULLIF(0, 0) AS e, NULLIF(10, 0) AS f,
       NULLIFZERO(0) AS g, NULLIFZERO(5) AS h, ZEROIFNULL(NULL) AS i, ZEROIFNULL(1.5) AS j`,
    [{ a: 'B', b: 'yes', c: 0, d: 10, e: null, f: 10, g: null, h: 5, i: 0, j: 1.5 }],
  ],
];

describe('library: mathematical, conditional and bit functions as BigQuery documents them', () => {
  for (const [name, bq, rows] of examples) {
    it(`when ${name} runs the reference's examples, then the rows are BigQuery's`, async () => {
      await expectTranslation(bq).toReturn(rows);
    });
  }

  it('when a value is outside the function domain, then the query fails as in BigQuery, and SAFE. answers NULL', async () => {
    for (const bad of [
      'SQRT(-1.0)',
      'LN(0)',
      'LOG10(-5)',
      'ASIN(2)',
      'ACOSH(0.5)',
      'COT(0)',
      'DIV(20, 0)',
      'MOD(25, 0)',
      'POW(0, -1)',
      'POW(-8, 0.5)',
    ]) {
      await assert.rejects(runTranslation(`SELECT ${bad} AS x FROM UNNEST([1])`), `${bad} should fail`);
    }
    await expectTranslation(
      `SELECT SAFE.SQRT(-1.0) AS a, SAFE.LN(0) AS b, SAFE.ASIN(2) AS c, SAFE.POW(0, -1) AS d, SAFE.LOG(10, 1) AS e, SAFE.EXP(1000) AS f, SAFE.SQRT(4) AS g`,
    ).toReturn([{ a: null, b: null, c: null, d: null, e: null, f: null, g: 2 }]);
  });

  it('when a number function gets a string, then it is a 400 naming the function and the argument', async () => {
    await expectTranslation(`SELECT SQRT('4')`).toFail(SqlSyntaxError, /SQRT takes FLOAT64 as argument 1, not STRING/);
    await expectTranslation(`SELECT MOD(2.5, 2)`).toFail(SqlSyntaxError, /MOD takes INT64 as argument 1, not FLOAT64/);
    await expectTranslation(`SELECT ABS('x')`).toFail(SqlSyntaxError, /ABS takes a number as argument 1, not STRING/);
  });
});
