/**
 * The TIME type and BigQuery's time functions, and STRING(timestamp, zone): each row one of the
 * documented examples (GoogleSQL's reference, from which BigQuery's is generated: the
 * google/zetasql repository, time_functions.md and timestamp_functions.md), run on
 * Postgres. TIME values come back as Postgres prints them, `15:30:00` (docs/API.md, "Row encoding").
 */
import assert from 'node:assert/strict';
import { SqlSyntaxError } from '../../src/sql/errors.js';
import { TIME_EXAMPLES } from '../support/libraryExamples.js';
import { expectTranslation, runTranslation } from '../support/translation.js';

describe('library: TIME', () => {
  for (const [name, bq, rows] of TIME_EXAMPLES) {
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
