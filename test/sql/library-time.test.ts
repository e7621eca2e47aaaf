/**
 * The TIME type and BigQuery's time functions, and STRING(timestamp, zone): each row one of the
 * documented examples (GoogleSQL's reference, from which BigQuery's is generated: the
 * google/zetasql repository, docs/time_functions.md and docs/timestamp_functions.md), run on
 * Postgres. TIME values come back as Postgres prints them, `15:30:00` (docs/API.md, "Row encoding").
 */
import assert from 'node:assert/strict';
import { SqlSyntaxError } from '../../src/sql/errors.js';
import { expectTranslation, runTranslation } from '../support/translation.js';

const cases: [name: string, bq: string, rows: Record<string, unknown>[]][] = [
  [
    'TIME literals, CAST to and from STRING, and comparison',
    `select time '15:30:00' as a, cast('07:05:09.250' as time) as b, cast(time '15:30:00' as string) as c,
            time '15:30:00' > time '09:00:00' as d, time '15:30:00' = '15:30:00' as e, safe_cast('25:00:00' as time) as f,
            cast(datetime '2008-12-25 15:30:00' as time) as g, cast(timestamp '2008-12-25 15:30:00+08' as time) as h`,
    [{ a: '15:30:00', b: '07:05:09.25', c: '15:30:00', d: true, e: true, f: null, g: '15:30:00', h: '07:30:00' }],
  ],
  [
    'EXTRACT from a TIME',
    `select extract(hour from time "15:30:00") as hour, extract(minute from time '15:30:00') as m,
            extract(second from time '15:30:07.25') as s, extract(millisecond from time '15:30:07.25') as ms`,
    [{ hour: 15, m: 30, s: 7, ms: 250 }],
  ],
  [
    'TIME(hour, minute, second), TIME(timestamp, zone), TIME(datetime)',
    `select time(15, 30, 00) as time_hms, time(timestamp "2008-12-25 15:30:00+08", "America/Los_Angeles") as time_tstz,
            time(datetime "2008-12-25 15:30:00.000000") as time_dt, time(timestamp "2008-12-25 15:30:00+08") as time_utc`,
    [{ time_hms: '15:30:00', time_tstz: '23:30:00', time_dt: '15:30:00', time_utc: '07:30:00' }],
  ],
  [
    'TIME_ADD / TIME_SUB, wrapping around midnight',
    `select time "15:30:00" as original_time, time_add(time "15:30:00", interval 10 minute) as later,
            time_sub(time "15:30:00", interval 10 minute) as earlier, time_add(time '23:30:00', interval 1 hour) as wrapped,
            time_sub(time '00:30:00', interval 1 hour) as back, time_add(time '10:00:00', interval 50 hour) as days`,
    [{ original_time: '15:30:00', later: '15:40:00', earlier: '15:20:00', wrapped: '00:30:00', back: '23:30:00', days: '12:00:00' }],
  ],
  [
    'TIME_DIFF counts part boundaries; TIME_TRUNC',
    `select time_diff(time "15:30:00", time "14:35:00", minute) as difference, time_diff(time '14:35:00', time '15:30:00', minute) as negative,
            time_diff(time '15:00:00', time '14:59:59', hour) as hours, time_trunc(time "15:30:00", hour) as truncated,
            time_trunc(time '15:30:07.123456', millisecond) as ms`,
    [{ difference: 55, negative: -55, hours: 1, truncated: '15:00:00', ms: '15:30:07.123' }],
  ],
  [
    'FORMAT_TIME and PARSE_TIME',
    `select format_time("%R", time "15:30:00") as formatted_time, format_time('%H:%M:%S', time '07:05:09') as hms,
            parse_time("%H", "15") as parsed_time, parse_time('%I:%M:%S %p', '2:23:38 pm') as pm, parse_time('%T', '07:30:00') as t`,
    [{ formatted_time: '15:30', hms: '07:05:09', parsed_time: '15:00:00', pm: '14:23:38', t: '07:30:00' }],
  ],
  [
    'STRING of a TIMESTAMP, in UTC or a zone',
    `select string(timestamp "2008-12-25 15:30:00+00", "UTC") as string, string(timestamp '2008-12-25 15:30:00+00') as utc,
            string(timestamp '2008-12-25 15:30:00+00', 'America/Los_Angeles') as la, string(timestamp '2008-12-25 15:30:00.25+00', 'Asia/Kolkata') as kolkata`,
    [
      {
        string: '2008-12-25 15:30:00+00',
        utc: '2008-12-25 15:30:00+00',
        la: '2008-12-25 07:30:00-08',
        kolkata: '2008-12-25 21:00:00.25+05:30',
      },
    ],
  ],
];

describe('library: TIME', () => {
  for (const [name, bq, rows] of cases) {
    it(`when ${name}, then the documented result`, async () => {
      await expectTranslation(bq).toReturn(rows);
    });
  }

  it('when CURRENT_TIME is read, with or without parentheses and zone, then it is now as a time of day', async () => {
    const { rows, translation } = await runTranslation(
      `select current_time as a, current_time() as b, current_time('UTC') as c, current_time('Asia/Kolkata') as d`,
    );
    assert.deepEqual(
      translation.columns.map((c) => c.type),
      ['TIME', 'TIME', 'TIME', 'TIME'],
    );
    const seconds = (t: unknown): number => {
      const [h, m, s] = String(t).split(':').map(Number);
      return h * 3600 + m * 60 + s;
    };
    const now = new Date();
    const utc = now.getUTCHours() * 3600 + now.getUTCMinutes() * 60 + now.getUTCSeconds();
    const near = (a: number, b: number): boolean => Math.min(Math.abs(a - b), 86400 - Math.abs(a - b)) < 120;
    assert.ok(near(seconds(rows[0].a), utc), `${String(rows[0].a)} is now in UTC`);
    assert.equal(rows[0].a, rows[0].b);
    assert.equal(rows[0].a, rows[0].c);
    assert.ok(near(seconds(rows[0].d), (utc + 5.5 * 3600) % 86400), `${String(rows[0].d)} is now in Kolkata`);
  });

  it('when a TIME meets what BigQuery refuses, then a 400 naming it', async () => {
    await expectTranslation(`select extract(day from time '15:30:00') as x`).toFail(SqlSyntaxError, /EXTRACT\(DAY FROM …\).*not a TIME/);
    await expectTranslation(`select time_add(time '15:30:00', interval 1 day) as x`).toFail(SqlSyntaxError, /MICROSECOND to HOUR, not DAY/);
    await expectTranslation(`select time_trunc(time '15:30:00', day) as x`).toFail(SqlSyntaxError, /DAY is not valid for a TIME/);
    await expectTranslation(`select time_diff(time '15:30:00', 3, hour) as x`).toFail(
      SqlSyntaxError,
      /TIME_DIFF takes TIME as argument 2, not INT64/,
    );
    await expectTranslation(`select time '15:30:00' < timestamp '2008-12-25 15:30:00' as x`).toFail(
      SqlSyntaxError,
      /no operator < for TIME and TIMESTAMP/,
    );
    await expectTranslation(`select cast(time '15:30:00' as date) as x`).toFail(SqlSyntaxError, /invalid cast from TIME to DATE/);
    await expectTranslation(`select string(3) as x`).toFail(SqlSyntaxError, /STRING takes TIMESTAMP or JSON as argument 1, not INT64/);
  });
});
