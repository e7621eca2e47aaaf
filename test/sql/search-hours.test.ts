/**
 * The split of a searched log table's scan by the search hours (src/sql/postgres/searchHours.ts):
 * a tautology on `timestamp`, so the rows are the same with it, without it, and with the hours of
 * another clock (a translation cached in an earlier hour or day); events exactly on the hours'
 * bounds, just before them, in the hour not over, on the day before and later days included.
 * That the planner then reads the hours through their partial indexes is checked where the
 * upkeep builds them (test/management/search-indexes.test.ts).
 */
import assert from 'node:assert/strict';
import { SEARCH_HOUR_MS, searchHoursAt } from '../../src/sql/catalog.js';
import { insertEvents } from '../support/db.js';
import { runTranslation } from '../support/translation.js';

const DAY = 86_400_000;
const P = `sqltest-search-hours-${Date.now().toString(36)}`;
const src = '`cloudflare.logs.prod`';

describe('search hours: the split of a searched scan', function () {
  this.timeout(60_000);
  const now = Date.now();
  const today = Math.floor(now / DAY) * DAY;
  const hour = Math.floor(now / SEARCH_HOUR_MS) * SEARCH_HOUR_MS;
  /** Instants around every bound a split may name: day starts, hour starts, the hour not over. */
  const instants = [
    today - 2 * DAY + 5,
    today - DAY - 1,
    today - DAY,
    today - DAY + 3 * SEARCH_HOUR_MS - 1,
    today - DAY + 3 * SEARCH_HOUR_MS,
    today - 1,
    today,
    today + 1,
    hour - SEARCH_HOUR_MS - 1,
    hour - SEARCH_HOUR_MS,
    hour - 1,
    hour,
    Math.min(now - 1000, hour + 1),
  ].filter((ms, i, all) => ms <= now - 1000 && all.indexOf(ms) === i);

  before(async () => {
    await insertEvents(
      'cloudflare.logs.prod',
      instants.flatMap((ms, i) => [
        { project: P, timestamp: new Date(ms).toISOString(), event_message: `GET /a needle-${i} found` },
        { project: P, timestamp: new Date(ms).toISOString(), event_message: `GET /b other-${i}` },
      ]),
    );
  });

  const clocks = {
    now,
    'an hour ago': now - SEARCH_HOUR_MS,
    'just after midnight (the day before split too)': today + 10 * 60_000,
    'yesterday (a translation cached a day ago)': now - DAY,
    'in an hour': now + SEARCH_HOUR_MS,
  };
  const searches = {
    LIKE: `regexp_contains(t.event_message, 'needle')`,
    'a regular expression': `regexp_contains(t.event_message, 'needle-[0-9]+ f')`,
    ILIKE: `lower(t.event_message) like '%needle%'`,
  };

  for (const [what, test] of Object.entries(searches))
    it(`when a search by ${what} reads the table split by the hours of any clock, then its rows are the rows without the split`, async () => {
      const query = `select t.timestamp, t.event_message from ${src} t where t.project = '${P}' and ${test} order by t.timestamp, t.event_message`;
      const plain = await runTranslation(query);
      assert.equal(plain.rows.length, instants.length, 'every needle found');
      assert.doesNotMatch(plain.translation.sql, /<@/);
      for (const [clock, ms] of Object.entries(clocks)) {
        const split = await runTranslation(query, { searchHours: searchHoursAt(ms) });
        assert.match(split.translation.sql, /"timestamp" <@ \('\[/, clock);
        assert.deepEqual(split.rows, plain.rows, clock);
      }
    });

  it('when the table is on the nullable side of an outer join, then it is not split (a NULL timestamp would drop the row)', async () => {
    const query = `select a.event_message, b.event_message as other from unnest(['x']) as k left join ${src} a on a.project = '${P}' and regexp_contains(a.event_message, 'needle-0 ') left join ${src} b on b.project = 'nobody-${P}' and regexp_contains(b.event_message, 'needle')`;
    const plain = await runTranslation(query);
    const split = await runTranslation(query, { searchHours: searchHoursAt(now) });
    assert.deepEqual(split.rows, plain.rows);
    assert.deepEqual(plain.rows, [{ event_message: 'GET /a needle-0 found', other: null }]);
  });

  it('when a query does not search, then it is not split', async () => {
    const { translation } = await runTranslation(`select count(*) as n from ${src} t where t.project = '${P}'`, {
      searchHours: searchHoursAt(now),
    });
    assert.doesNotMatch(translation.sql, /<@/);
  });
});
