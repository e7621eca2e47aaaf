import { insertEvents } from '../support/db.js';
import { expectTranslation } from '../support/translation.js';

const P = 'sqltest-grouping';
const hour = Math.floor(Date.now() / 3600_000) * 3600_000 - 2 * 3600_000;
const at = (minute: number) => new Date(hour + minute * 60_000).toISOString();
const bucket = (offsetHours: number) => new Date(hour + offsetHours * 3600_000).toISOString();

describe('GROUP BY, HAVING, ORDER BY, LIMIT, UNION ALL', () => {
  before(() =>
    insertEvents('postgres.logs', [
      { project: P, timestamp: at(1), event_message: 'a' },
      { project: P, timestamp: at(59), event_message: 'b' },
      { project: P, timestamp: at(61), event_message: 'c' },
    ]),
  );

  it('when GROUP BY names a select alias equal to an input column, then buckets do not split', async () => {
    await expectTranslation(
      `select timestamp_trunc(timestamp, hour) as timestamp, count(*) as n from \`postgres.logs\` where project = '${P}' group by timestamp order by timestamp`,
    ).toReturn([
      { timestamp: bucket(0), n: 2 },
      { timestamp: bucket(1), n: 1 },
    ]);
  });

  it('when GROUP BY uses an ordinal and HAVING filters groups, then only big groups remain', async () => {
    await expectTranslation(
      `select timestamp_trunc(timestamp, hour) as h, count(*) as n from \`postgres.logs\` where project = '${P}' group by 1 having count(*) > 1`,
    ).toReturn([{ h: bucket(0), n: 2 }]);
  });

  it('when ORDER BY names an alias and LIMIT / OFFSET page, then the page is right', async () => {
    await expectTranslation(
      `select event_message as m from \`postgres.logs\` where project = '${P}' order by m desc limit 1 offset 1`,
    ).toReturn([{ m: 'b' }]);
  });

  it('when UNION ALL is ordered and limited, then it applies to the whole', async () => {
    await expectTranslation(`select 2 as x union all select 1 union all select 3 order by x limit 2`).toReturn([{ x: 1 }, { x: 2 }]);
  });

  it('when maxRows is smaller than LIMIT, or there is no LIMIT, then it caps the rows', async () => {
    await expectTranslation(`select event_message from \`postgres.logs\` where project = '${P}' order by 1 limit 10`, {
      maxRows: 2,
    }).toReturn([{ event_message: 'a' }, { event_message: 'b' }]);
    await expectTranslation(`select 1 as x union all select 2 union all select 3`, { maxRows: 1 }).toReturn([{ x: 1 }]);
  });

  it('when HAVING names a select alias, then it means that expression', async () => {
    await expectTranslation(
      `select event_message, count(*) as n from \`postgres.logs\` where project = '${P}' group by event_message having n >= 1 order by event_message limit 1`,
    ).toReturn([{ event_message: 'a', n: 1 }]);
  });
});
