/**
 * BigQuery's conversion and NET functions against the examples of its reference (GoogleSQL's
 * conversion_functions.md, net_functions.md), run on Postgres; the expected rows are the
 * reference's.
 */
import assert from 'node:assert/strict';
import { expectTranslation, runTranslation } from '../support/translation.js';

describe('library: conversion and NET functions as BigQuery documents them', () => {
  it('when text in hexadecimal is CAST to INT64, then it is read as BigQuery reads it', async () => {
    await expectTranslation(
      `SELECT CAST('0x123' AS INT64) AS a, CAST('-0x1F' AS INT64) AS b, CAST(s AS INT64) AS c, SAFE_CAST('0x10' AS INT64) AS d, SAFE_CAST('9223372036854775807' AS INT64) AS e
       FROM UNNEST(['0xff']) AS s`,
    ).toReturn([{ a: 291, b: -31, c: 255, d: 16, e: Number('9223372036854775807') }]);
  });

  it('when decimal text, an upper-case hexadecimal prefix or NULL is CAST to INT64 from a column, then each is read as BigQuery reads it', async () => {
    await expectTranslation(
      `SELECT s, CAST(s AS INT64) AS n FROM UNNEST(['42', '0X1A', ' -0x10 ', NULL]) AS s WITH OFFSET AS o ORDER BY o`,
    ).toReturn([
      { s: '42', n: 42 },
      { s: '0X1A', n: 26 },
      { s: ' -0x10 ', n: -16 },
      { s: null, n: null },
    ]);
  });

  it('when SAFE_CAST meets text of the right shape that does not convert, then it is NULL, not an error', async () => {
    await expectTranslation(
      `SELECT SAFE_CAST('2020-13-45' AS DATE) AS a, SAFE_CAST(s AS DATE) AS b, SAFE_CAST('2020-02-30 10:00:00' AS TIMESTAMP) AS c, SAFE_CAST(s AS DATETIME) AS d,
         SAFE_CAST('99999999999999999999' AS INT64) AS e, SAFE_CAST('2020-02-28' AS DATE) AS f, SAFE_CAST('apple' AS INT64) AS g
       FROM UNNEST(['2020-13-45']) AS s`,
    ).toReturn([{ a: null, b: null, c: null, d: null, e: null, f: '2020-02-28', g: null }]);
  });

  it('when PARSE_NUMERIC and PARSE_BIGNUMERIC read the reference examples, then the values are BigQuery’s', async () => {
    await expectTranslation(
      `SELECT PARSE_NUMERIC("123.45") AS a, PARSE_NUMERIC("12.34E27") AS b, PARSE_NUMERIC("1.0123456789") AS c, PARSE_NUMERIC("  -  12.34 ") AS d,
         PARSE_NUMERIC("12.34e-1-") AS e, PARSE_NUMERIC("  1,2,,3,.45 + ") AS f, PARSE_NUMERIC(".1234  ") AS g, PARSE_BIGNUMERIC("1.0123456789") AS h`,
    ).toReturn([
      { a: 123.45, b: 12340000000000000000000000000, c: 1.012345679, d: -12.34, e: -1.234, f: 123.45, g: 0.1234, h: 1.0123456789 },
    ]);
    for (const bad of [',,,.1234  ', '1  23.4 5  ', '  e1 ', '  - 12.3 - ', '12.34E100 ', '$12.34']) {
      await assert.rejects(
        runTranslation(`SELECT PARSE_NUMERIC(s) AS x FROM UNNEST(['${bad}']) AS s`),
        `PARSE_NUMERIC('${bad}') should fail`,
      );
    }
  });

  it('when NET.HOST reads the reference examples, then the hosts are BigQuery’s', async () => {
    await expectTranslation(
      `WITH urls AS (SELECT 1 AS o, '' AS input UNION ALL SELECT 2, 'http://abc.xyz' UNION ALL SELECT 3, '//user:password@a.b:80/path?query'
         UNION ALL SELECT 4, 'https://[::1]:80' UNION ALL SELECT 5, 'http://例子.卷筒纸.中国' UNION ALL SELECT 6, '    www.Example.Co.UK    '
         UNION ALL SELECT 7, 'mailto:?to=&subject=&body=')
       SELECT input, NET.HOST(input) AS host FROM urls ORDER BY o`,
    ).toReturn([
      { input: '', host: null },
      { input: 'http://abc.xyz', host: 'abc.xyz' },
      { input: '//user:password@a.b:80/path?query', host: 'a.b' },
      { input: 'https://[::1]:80', host: '[::1]' },
      { input: 'http://例子.卷筒纸.中国', host: '例子.卷筒纸.中国' },
      { input: '    www.Example.Co.UK    ', host: 'www.Example.Co.UK' },
      { input: 'mailto:?to=&subject=&body=', host: 'mailto' },
    ]);
  });
});
