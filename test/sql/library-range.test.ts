/**
 * BigQuery's RANGE type and its functions, each row one of the documented examples (GoogleSQL's
 * reference, from which BigQuery's is generated: the google/zetasql repository,
 * range-functions.md, lexical.md "Range literals", conversion_functions.md "CAST AS RANGE"), run
 * on Postgres. A RANGE comes back as the service answers it (docs/API.md, "Row encoding").
 */
import { rejects } from 'node:assert/strict';
import assert from 'node:assert/strict';
import { SqlSyntaxError, SqlUnsupportedError } from '../../src/sql/errors.js';
import { RANGE_EXAMPLES } from '../support/libraryExamples.js';
import { expectTranslation, runTranslation } from '../support/translation.js';

describe('library: the RANGE type', () => {
  for (const [name, bq, rows] of RANGE_EXAMPLES) {
    it(`when ${name}, then the documented result`, async () => {
      await expectTranslation(bq).toReturn(rows);
    });
  }

  it('when a range is selected, then its column type is BigQuery’s', async () => {
    const { translation } = await runTranslation(
      `select range<date> '[2020-01-01, 2020-01-02)' as a, range(datetime '2020-01-01 00:00:00', null) as b,
              generate_range_array(range<timestamp> '[2020-01-01 00:00:00, 2020-01-02 00:00:00)', interval 12 hour) as c`,
    );
    assert.deepEqual(
      translation.columns.map((c) => c.type),
      ['RANGE<DATE>', 'RANGE<DATETIME>', 'ARRAY<RANGE<TIMESTAMP>>'],
    );
  });

  it('when a range is written as JSON, then it is the object of its bounds, NULL for an unbounded one', async () => {
    await expectTranslation(
      `select to_json_string(range<date> '[2020-01-01, UNBOUNDED)') as a, to_json(range<timestamp> '[UNBOUNDED, 2020-10-01 12:00:00+08)') as b,
              to_json_string(cast(null as range<date>)) as c`,
    ).toReturn([{ a: '{"end":null,"start":"2020-01-01"}', b: '{"end":"2020-10-01T04:00:00Z","start":null}', c: 'null' }]);
  });

  it('when a range meets the functions BigQuery defines for any value, then they take it', async () => {
    await expectTranslation(
      `select array_includes([range<date> '[2020-01-01, UNBOUNDED)'], '[2020-01-01, UNBOUNDED)') as a, json_object('r', range<date> '[2020-01-01, 2020-02-01)') as b,
              format('%t', range<date> '[UNBOUNDED, 2020-02-01)') as c, if(false, range<date> '[2020-01-01, 2020-02-01)', '[2020-03-01, 2020-04-01)') as d,
              coalesce(null, range<datetime> '[2020-01-01 10:00:00, UNBOUNDED)') as e`,
    ).toReturn([
      {
        a: true,
        b: '{"r":{"end":"2020-02-01","start":"2020-01-01"}}',
        c: '[UNBOUNDED, 2020-02-01)',
        d: '[2020-03-01, 2020-04-01)',
        e: '[2020-01-01T10:00:00, UNBOUNDED)',
      },
    ]);
    await expectTranslation(
      `select case when true then range<date> '[2020-01-01, 2020-02-01)' else '[2020-03-01,2020-04-01)' end as x`,
    ).toFail(SqlSyntaxError, /invalid RANGE<DATE> literal '\[2020-03-01,2020-04-01\)'.*column 8/);
  });

  it('when a parameter is compared with a range or read as one, then it is BigQuery’s text of a range', async () => {
    await expectTranslation(
      `select range<date> '[2020-01-01, 2020-02-01)' = @r as a, range_contains(range<date> '[2020-01-01, 2020-02-01)', @d) as b,
              range_overlaps(range<date> '[2020-01-01, 2020-02-01)', @r) as c`,
      { params: { r: '[2020-01-01, 2020-02-01)', d: '2020-01-15' } },
    ).toReturn([{ a: true, b: true, c: true }]);
  });

  it('when BigQuery raises an error for a range while running, then the query fails, and SAFE. is NULL', async () => {
    for (const [bq, message] of [
      [`select range(d, date '2022-12-01') as x from unnest([date '2022-12-31']) as d`, /not before the upper bound/],
      [`select range(date '2022-12-01', d) as x from unnest([date '2022-12-01']) as d`, /not before the upper bound/],
      [
        `select range_intersect(range<date> '[2020-02-01, 2020-09-01)', r) as x from unnest([range<date> '[2021-06-15, 2022-04-15)']) as r`,
        /do not overlap/,
      ],
      [`select cast(s as range<date>) as x from unnest(['[2020-01-01,2020-01-02)']) as s`, /invalid RANGE<DATE> text/],
      [`select cast(s as range<date>) as x from unnest(['[2020-01-01, 2020-13-02)']) as s`, /out of range|invalid/],
      [`select cast(s as range<date>) as x from unnest(['[2020-01-02, 2020-01-01)']) as s`, /not before the upper bound/],
      [`select cast(s as range<date>) as x from unnest(['[today, 2020-01-01)']) as s`, /invalid RANGE<DATE> text/],
      [`select generate_range_array(range<date> '[2020-01-01, UNBOUNDED)', interval 1 day) as x`, /bounded range/],
      [`select generate_range_array(range<date> '[2020-01-01, 2021-01-01)', i) as x from unnest([interval 0 day]) as i`, /cannot be 0/],
      [`select generate_range_array(range<date> '[2020-01-01, 2021-01-01)', i) as x from unnest([interval 1 hour]) as i`, /YEAR to DAY/],
      [`select generate_range_array(range<date> '[0001-01-01, 9999-01-01)', interval 1 day) as x`, /at most 100000/],
    ] as const) {
      await rejects(expectTranslation(bq).toReturn([]), message, bq);
    }
    await expectTranslation(
      `select safe.range(d, date '2022-12-01') as a, safe_cast(s as range<date>) as b, safe_cast('[2020-01-01,2020-01-02)' as range<date>) as c,
              safe_cast(s2 as range<date>) as d
       from unnest([date '2022-12-31']) as d, unnest(['[2020-01-01,2020-01-02)']) as s, unnest(['[2020-01-01, 2020-02-30)']) as s2`,
    ).toReturn([{ a: null, b: null, c: null, d: null }]);
  });

  it('when a range meets what BigQuery refuses while compiling, then a 400 naming it', async () => {
    for (const [bq, error, message] of [
      [`select range<date> '[2020-01-01,2020-12-31)' as x`, SqlSyntaxError, /invalid RANGE<DATE> literal.*one space after the comma/],
      [`select range<date> '[2020-12-31, 2020-01-01)' as x`, SqlSyntaxError, /lower bound must be before the upper bound/],
      [`select range<date> '[2020-01-01, 2020-01-01)' as x`, SqlSyntaxError, /lower bound must be before the upper bound/],
      [`select range<date> '[2020-02-30, 2020-03-01)' as x`, SqlSyntaxError, /2020-02-30 is not a DATE/],
      [`select range<date> '(2020-01-01, 2020-02-01]' as x`, SqlSyntaxError, /invalid RANGE<DATE> literal/],
      [`select range<timestamp> '[2020-01-01 12:00:00+08, 2020-01-01 04:00:00+00)' as x`, SqlSyntaxError, /lower bound must be before/],
      [`select range<time> '[10:00:00, 11:00:00)' as x`, SqlSyntaxError, /RANGE takes DATE, DATETIME or TIMESTAMP, not time/],
      [`select range<date> 5 as x`, SqlSyntaxError, /expected a string literal after RANGE<DATE>/],
      [
        `select range(date '2020-01-01', timestamp '2020-02-01') as x`,
        SqlSyntaxError,
        /RANGE needs bounds of one type, not DATE and TIMESTAMP/,
      ],
      [`select range(1, 2) as x`, SqlSyntaxError, /RANGE takes DATE, DATETIME or TIMESTAMP as argument 1, not INT64/],
      [`select range_start(date '2020-01-01') as x`, SqlSyntaxError, /RANGE_START takes RANGE as argument 1, not DATE/],
      [
        `select range_overlaps(range<date> '[2020-01-01, 2020-02-01)', range<datetime> '[2020-01-01 00:00:00, 2020-02-01 00:00:00)') as x`,
        SqlSyntaxError,
        /RANGE_OVERLAPS needs two ranges of one type, not RANGE<DATE> and RANGE<DATETIME>/,
      ],
      [
        `select range_contains(range<date> '[2020-01-01, 2020-02-01)', timestamp '2020-01-05') as x`,
        SqlSyntaxError,
        /RANGE_CONTAINS takes DATE as argument 2, not TIMESTAMP/,
      ],
      [
        `select generate_range_array(range<timestamp> '[2020-01-01 00:00:00, 2020-03-01 00:00:00)', interval 1 month) as x`,
        SqlSyntaxError,
        /RANGE<TIMESTAMP> steps by one of DAY, HOUR, MINUTE, SECOND, not MONTH/,
      ],
      [
        `select generate_range_array(range<date> '[2020-01-01, 2020-03-01)', interval '1 2' day to hour) as x`,
        SqlSyntaxError,
        /not DAY TO HOUR/,
      ],
      [
        `select range<date> '[2020-01-01, 2020-02-01)' + range<date> '[2020-01-15, 2020-03-01)' as x`,
        SqlSyntaxError,
        /no operator \+ for RANGE<DATE>/,
      ],
      [`select range<date> '[2020-01-01, 2020-02-01)' < date '2020-01-01' as x`, SqlSyntaxError, /no operator < for RANGE<DATE> and DATE/],
      [`select range<date> '[2020-01-01, 2020-02-01)' = '[2020-01-01,2020-02-01)' as x`, SqlSyntaxError, /invalid RANGE<DATE> literal/],
      [`select date(range<date> '[2020-01-01, 2020-02-01)') as x`, SqlSyntaxError, /DATE takes no RANGE, but argument 1 is a RANGE<DATE>/],
      [`select sum(r) as x from unnest([range<date> '[2020-01-01, 2020-02-01)']) as r`, SqlSyntaxError, /SUM takes no RANGE/],
      [`select timestamp_trunc(range<date> '[2020-01-01, 2020-02-01)', day) as x`, SqlSyntaxError, /TIMESTAMP_TRUNC takes no RANGE/],
      [`select not range<date> '[2020-01-01, 2020-02-01)' as x`, SqlSyntaxError, /no operator NOT for RANGE<DATE>/],
      [
        `select extract(day from range<date> '[2020-01-01, 2020-02-01)') as x`,
        SqlSyntaxError,
        /EXTRACT\(DAY FROM …\) takes a date or time, not a RANGE<DATE>/,
      ],
      [`select cast(date '2020-01-01' as range<date>) as x`, SqlSyntaxError, /invalid cast from DATE to RANGE<DATE>/],
      [
        `select cast(range<date> '[2020-01-01, 2020-02-01)' as range<datetime>) as x`,
        SqlSyntaxError,
        /invalid cast from RANGE<DATE> to RANGE<DATETIME>/,
      ],
      [`select array_max([range<date> '[2020-01-01, 2020-02-01)']) as x`, SqlSyntaxError, /ARRAY_MAX takes no array of RANGE<DATE>/],
      [
        `select array_to_string([range<date> '[2020-01-01, 2020-02-01)'], ',') as x`,
        SqlSyntaxError,
        /ARRAY_TO_STRING takes no array of RANGE<DATE>/,
      ],
      [
        `select to_json_string([range<date> '[2020-01-01, 2020-02-01)']) as x`,
        SqlUnsupportedError,
        /TO_JSON_STRING of an ARRAY<RANGE<DATE>> is not supported/,
      ],
      [
        `select min(r) over () as x from unnest([range<date> '[2020-01-01, 2020-02-01)']) as r`,
        SqlUnsupportedError,
        /MIN of a RANGE with OVER/,
      ],
    ] as const) {
      await expectTranslation(bq)
        .toFail(error, message)
        .catch((e: Error) => assert.fail(`${bq}: ${e.message}`));
    }
  });
});
