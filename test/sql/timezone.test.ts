import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const P = 'sqltest-timezone';
const day = Math.floor(Date.now() / 86400_000) * 86400_000 - 86400_000;
const T = new Date(day + 2 * 3600_000 + 30 * 60_000).toISOString(); // 02:30 UTC: another day in New York
const zone = { timeZone: 'America/New_York' };

describe('time zones: results are UTC whatever the session TimeZone', () => {
  before(() => insertEvents('pgbouncer.logs.prod', [{ project: P, timestamp: T, event_message: 'tz' }]));
  const from = `from \`pgbouncer.logs.prod\` where project = '${P}'`;

  it('when truncating to the day and formatting, then UTC days and wall clock', async () => {
    await expectTranslation(
      `select timestamp_trunc(timestamp, day) as d, datetime(timestamp, 'UTC') as dt, extract(hour from timestamp) as h, format_timestamp('%H:%M', timestamp) as f ${from}`,
      zone,
    ).toReturn([{ d: new Date(day).toISOString(), dt: T.slice(0, 19), h: 2, f: '02:30' }]);
  });

  it('when a zone-less string is compared or cast, then it is read as UTC', async () => {
    const literal = T.replace('T', ' ').replace('.000Z', '');
    await expectTranslation(
      `select count(*) as n ${from} and timestamp = '${literal}' and timestamp = cast('${literal}' as timestamp) and timestamp = timestamp('${literal}')`,
      zone,
    ).toReturn([{ n: 1 }]);
    await expectTranslation(`select count(*) as n ${from} and timestamp = cast(@t as timestamp)`, {
      ...zone,
      params: { t: literal },
    }).toReturn([{ n: 1 }]);
  });

  it('when parsing and converting epochs, then UTC', async () => {
    await expectTranslation(
      `select parse_timestamp('%Y-%m-%d %H:%M', '2026-07-01 12:00') as p, cast(timestamp '2026-07-01 12:00:00' as string) as s, date(timestamp '2026-07-01 01:00:00') as d`,
      zone,
    ).toReturn([{ p: '2026-07-01T12:00:00.000Z', s: '2026-07-01 12:00:00+00', d: '2026-07-01' }]);
  });
});
