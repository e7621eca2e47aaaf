/**
 * Date, DATETIME and TIMESTAMP functions, each row one of BigQuery's documented examples (GoogleSQL's
 * reference of dates, datetimes and timestamps, in the google/zetasql repository), its times
 * restated in UTC, run on Postgres and compared with the documented result.
 */
import { SqlSyntaxError, SqlUnsupportedError } from '../../src/sql/errors.js';
import { expectTranslation } from '../support/translation.js';

const cases: [name: string, bq: string, rows: Record<string, unknown>[]][] = [
  [
    'TIMESTAMP_TRUNC takes a time zone (midnight in Los Angeles is 08:00 UTC)',
    `select timestamp_trunc(timestamp "2008-12-25 15:30:00+00", day, "UTC") as utc,
            timestamp_trunc(timestamp "2008-12-25 15:30:00+00", day, "America/Los_Angeles") as la`,
    [{ utc: '2008-12-25T00:00:00.000Z', la: '2008-12-25T08:00:00.000Z' }],
  ],
  [
    'TIMESTAMP_TRUNC by WEEK(MONDAY) in UTC and in Auckland, and by ISOYEAR',
    `select timestamp_trunc(timestamp("2017-11-06 00:00:00+12"), week(monday), "UTC") as utc_truncated,
            timestamp_trunc(timestamp("2017-11-06 00:00:00+12"), week(monday), "Pacific/Auckland") as nzdt_truncated,
            timestamp_trunc("2015-06-15 00:00:00+00", isoyear) as isoyear_boundary,
            extract(isoyear from timestamp "2015-06-15 00:00:00+00") as isoyear_number`,
    [
      {
        utc_truncated: '2017-10-30T00:00:00.000Z',
        nzdt_truncated: '2017-11-05T11:00:00.000Z',
        isoyear_boundary: '2014-12-29T00:00:00.000Z',
        isoyear_number: 2015,
      },
    ],
  ],
  [
    'DATE_TRUNC: weeks start on Sunday, WEEK(MONDAY) on Monday, ISOYEAR on the ISO year Monday',
    `select date_trunc(date '2008-12-25', month) as month, date_trunc(date '2017-11-05', week(monday)) as date_truncated,
            date_trunc('2015-06-15', isoyear) as isoyear_boundary, date_trunc(date '2008-12-25', week) as week`,
    [{ month: '2008-12-01', date_truncated: '2017-10-30', isoyear_boundary: '2014-12-29', week: '2008-12-21' }],
  ],
  [
    'DATETIME_TRUNC',
    `select datetime_trunc(datetime "2008-12-25 15:30:00", day) as truncated, datetime_trunc(datetime "2017-11-05 00:00:00", week(monday)) as monday`,
    [{ truncated: '2008-12-25T00:00:00', monday: '2017-10-30T00:00:00' }],
  ],
  [
    'DATE_ADD / DATE_SUB / DATETIME_ADD / DATETIME_SUB',
    `select date_add(date '2008-12-25', interval 5 day) as five_days_later, date_sub(date '2008-12-25', interval 5 day) as five_days_ago,
            datetime_add(datetime "2008-12-25 15:30:00", interval 10 minute) as later, datetime_sub(datetime "2008-12-25 15:30:00", interval 10 minute) as earlier`,
    [{ five_days_later: '2008-12-30', five_days_ago: '2008-12-20', later: '2008-12-25T15:40:00', earlier: '2008-12-25T15:20:00' }],
  ],
  [
    'DATE_DIFF counts day, week and ISO boundaries',
    `select date_diff(date '2010-07-07', date '2008-12-25', day) as days_diff,
            date_diff(date '2017-10-15', date '2017-10-14', day) as d, date_diff(date '2017-10-15', date '2017-10-14', week) as w,
            date_diff('2017-12-30', '2014-12-30', year) as year_diff, date_diff('2017-12-30', '2014-12-30', isoyear) as isoyear_diff,
            date_diff('2017-12-18', '2017-12-17', week) as week_diff, date_diff('2017-12-18', '2017-12-17', week(monday)) as week_weekday_diff,
            date_diff('2017-12-18', '2017-12-17', isoweek) as isoweek_diff`,
    [{ days_diff: 559, d: 1, w: 1, year_diff: 3, isoyear_diff: 2, week_diff: 0, week_weekday_diff: 1, isoweek_diff: 1 }],
  ],
  [
    'DATETIME_DIFF counts boundaries; TIMESTAMP_DIFF whole elapsed parts',
    `select datetime_diff(datetime "2010-07-07 10:20:00", datetime "2008-12-25 15:30:00", day) as difference,
            timestamp_diff(timestamp "2010-07-07 10:20:00+00", timestamp "2008-12-25 15:30:00+00", hour) as hours,
            timestamp_diff(timestamp "2001-02-01 01:00:00", timestamp "2001-02-01 00:00:01", hour) as negative_diff`,
    [{ difference: 559, hours: 13410, negative_diff: 0 }],
  ],
  [
    'LAST_DAY by month, year and week',
    `select last_day(date '2008-11-25', month) as m, last_day(date '2008-11-25') as d, last_day(date '2008-11-25', year) as y,
            last_day(date '2008-11-10', week(monday)) as w`,
    [{ m: '2008-11-30', d: '2008-11-30', y: '2008-12-31', w: '2008-11-16' }],
  ],
  [
    'DATE from parts and from a TIMESTAMP in a zone; UNIX_DATE and DATE_FROM_UNIX_DATE',
    `select date(2016, 12, 25) as date_ymd, date(timestamp "2016-12-25 05:30:00+07", "America/Los_Angeles") as date_tstz,
            unix_date(date '2008-12-25') as days_from_epoch, date_from_unix_date(14238) as date_from_epoch`,
    [{ date_ymd: '2016-12-25', date_tstz: '2016-12-24', days_from_epoch: 14238, date_from_epoch: '2008-12-25' }],
  ],
  [
    'DATETIME from parts and from a TIMESTAMP in a zone',
    `select datetime(2008, 12, 25, 5, 30, 0) as datetime_ymdhms, datetime(timestamp "2008-12-25 05:30:00+00", "America/Los_Angeles") as datetime_tstz`,
    [{ datetime_ymdhms: '2008-12-25T05:30:00', datetime_tstz: '2008-12-24T21:30:00' }],
  ],
  [
    'FORMAT_TIMESTAMP',
    `select format_timestamp("%c", timestamp "2050-12-25 15:30:55+00", "UTC") as a, format_timestamp("%b-%d-%Y", timestamp "2050-12-25 15:30:55+00") as b,
            format_timestamp("%b %Y", timestamp "2050-12-25 15:30:55+00") as c, format_timestamp("%Y-%m-%dT%H:%M:%SZ", timestamp "2050-12-25 15:30:55", "UTC") as d`,
    [{ a: 'Sun Dec 25 15:30:55 2050', b: 'Dec-25-2050', c: 'Dec 2050', d: '2050-12-25T15:30:55Z' }],
  ],
  [
    'FORMAT_DATE and FORMAT_DATETIME',
    `select format_date('%x', date '2008-12-25') as us_format, format_date('%b-%d-%Y', date '2008-12-25') as b, format_date('%b %Y', date '2008-12-25') as c,
            format_datetime('%c', datetime '2008-12-25 15:30:00') as d, format_datetime('%b-%d-%Y', datetime '2008-12-25 15:30:00') as e`,
    [{ us_format: '12/25/08', b: 'Dec-25-2008', c: 'Dec 2008', d: 'Thu Dec 25 15:30:00 2008', e: 'Dec-25-2008' }],
  ],
  [
    'PARSE_DATE, PARSE_DATETIME, PARSE_TIMESTAMP (in UTC, or in a named zone)',
    `select parse_date('%x', '12/25/08') as a, parse_date('%Y%m%d', '20081225') as b, parse_datetime('%Y-%m-%d %H:%M:%S', '1998-10-18 13:45:55') as c,
            parse_timestamp('%c', 'Thu Dec 25 07:30:00 2008') as d, parse_timestamp('%Y-%m-%d %H:%M', '2008-12-25 07:30', 'America/Los_Angeles') as e`,
    [{ a: '2008-12-25', b: '2008-12-25', c: '1998-10-18T13:45:55', d: '2008-12-25T07:30:00.000Z', e: '2008-12-25T15:30:00.000Z' }],
  ],
  [
    'TIMESTAMP_FROM_UNIX_* and the UNIX_* functions',
    `select timestamp_from_unix_seconds(1230219000) as a, timestamp_from_unix_millis(1230219000000) as b, timestamp_from_unix_micros(1230219000000000) as c,
            unix_seconds(timestamp "2008-12-25 15:30:00+00") as d`,
    [{ a: '2008-12-25T15:30:00.000Z', b: '2008-12-25T15:30:00.000Z', c: '2008-12-25T15:30:00.000Z', d: 1230219000 }],
  ],
  [
    'GENERATE_DATE_ARRAY fills days, and steps by an interval',
    `select array_to_string(array(select format_date('%F', d) from unnest(generate_date_array('2016-10-05', '2016-10-08')) as d), ',') as a,
            array_length(generate_date_array('2016-01-01', '2016-12-31', interval 2 month)) as b,
            array_length(generate_date_array('2016-10-05', '2016-10-01', interval 1 day)) as c`,
    [{ a: '2016-10-05,2016-10-06,2016-10-07,2016-10-08', b: 6, c: 0 }],
  ],
  [
    'GENERATE_TIMESTAMP_ARRAY fills empty buckets: every second, and whole days in UTC',
    `select t from unnest(generate_timestamp_array('2016-10-05 00:00:00', '2016-10-05 00:00:02', interval 1 second)) as t
     union all select t from unnest(generate_timestamp_array('2016-10-05 12:00:00', '2016-10-07 00:00:00', interval 1 day)) as t`,
    [
      { t: '2016-10-05T00:00:00.000Z' },
      { t: '2016-10-05T00:00:01.000Z' },
      { t: '2016-10-05T00:00:02.000Z' },
      { t: '2016-10-05T12:00:00.000Z' },
      { t: '2016-10-06T12:00:00.000Z' },
    ],
  ],
  [
    'EXTRACT of WEEK, WEEK(MONDAY), ISOWEEK, DATE and DATETIME, and AT TIME ZONE',
    `select extract(week from date '2017-01-01') as a, extract(week from date '2017-01-07') as b, extract(week(monday) from date '2017-01-01') as c,
            extract(isoweek from date '2017-01-01') as d, extract(week from date '2000-01-01') as e, extract(dayofweek from date '2017-01-01') as f,
            extract(date from timestamp "2008-12-25 05:30:00+00" at time zone "America/Los_Angeles") as g,
            extract(hour from timestamp "2008-12-25 15:30:00+00" at time zone "Asia/Tokyo") as h,
            extract(datetime from timestamp "2008-12-25 15:30:00+00") as i`,
    [{ a: 1, b: 1, c: 0, d: 52, e: 0, f: 1, g: '2008-12-24', h: 0, i: '2008-12-25T15:30:00' }],
  ],
  [
    'MAKE_INTERVAL and JUSTIFY_* (read back by EXTRACT)',
    `select extract(month from make_interval(1, 6, 15)) as a, extract(day from make_interval(1, 6, 15)) as b,
            extract(month from justify_days(interval 30 day)) as c, extract(day from justify_days(interval 29 day)) as d,
            extract(day from justify_hours(interval 24 hour)) as e, extract(day from timestamp_add(timestamp '2008-12-25 15:30:00+00', make_interval(0, 0, 1)) ) as f`,
    [{ a: 6, b: 15, c: 1, d: 29, e: 1, f: 26 }],
  ],
  [
    "INTERVAL range literals (the reference's examples, read back by EXTRACT and by adding them to a TIMESTAMP)",
    `select unix_micros(timestamp_add(timestamp '2020-01-01 00:00:00+00', interval '10:20:30.52' hour to second)) - unix_micros(timestamp '2020-01-01 00:00:00+00') as a,
            extract(year from interval '1-2' year to month) as b, extract(month from interval '1-2' year to month) as c,
            extract(month from interval '1 15' month to day) as d, extract(day from interval '1 15' month to day) as e,
            unix_seconds(timestamp_add(timestamp '2020-01-01 00:00:00+00', interval '1 5:30' day to minute)) - unix_seconds(timestamp '2020-01-01 00:00:00+00') as f,
            unix_seconds(timestamp_add(timestamp '2020-01-10 00:00:00+00', interval '-1 -2:00:00' day to second)) - unix_seconds(timestamp '2020-01-10 00:00:00+00') as g,
            extract(month from interval '-1-2 3 4:5:6.789' year to second) as h, extract(day from interval '-1-2 3 4:5:6.789' year to second) as i,
            extract(hour from interval '10:20:30.52' hour to second) as j`,
    [{ a: 37230520000, b: 1, c: 2, d: 1, e: 15, f: 106200, g: -93600, h: -2, i: 3, j: 10 }],
  ],
  [
    'NULL in, NULL out',
    `select date_add(cast(null as date), interval 1 day) as a, date_diff(cast(null as date), date '2008-12-25', day) as b,
            timestamp_trunc(cast(null as timestamp), day, 'UTC') as c, format_date('%F', cast(null as date)) as d`,
    [{ a: null, b: null, c: null, d: null }],
  ],
];

describe('library: dates, DATETIMEs and TIMESTAMPs', () => {
  for (const [name, bq, rows] of cases) {
    it(`when ${name}, then the documented result`, async () => {
      await expectTranslation(bq, { timeZone: 'America/New_York' }).toReturn(rows);
    });
  }

  it('when a date part or an INTERVAL is wrong, then a 400 naming the argument', async () => {
    await expectTranslation(`select date_add(date '2008-12-25', 5) as x`).toFail(SqlSyntaxError, /expected an INTERVAL/);
    await expectTranslation(`select interval '1:2' year to month as x`).toFail(SqlSyntaxError, /form 'Y-M'/);
    await expectTranslation(`select interval 5 hour to second as x`).toFail(SqlSyntaxError, /takes a string literal/);
    await expectTranslation(`select interval '1:2' second to hour as x`).toFail(SqlSyntaxError, /not a range/);
    await expectTranslation(`select date_diff(date '2008-12-25', date '2008-12-24', hour) as x`).toFail(
      SqlUnsupportedError,
      /date part HOUR/,
    );
    await expectTranslation(`select date_trunc(date '2008-12-25', week(someday)) as x`).toFail(SqlSyntaxError, /weekday/);
    await expectTranslation(`select format_date('%H', date '2008-12-25') as x`).toFail(
      SqlUnsupportedError,
      /%H is not supported for a DATE/,
    );
  });
});
