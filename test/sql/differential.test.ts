/**
 * The rewrites for speed (narrowed aggregates, path reads of single records and their guards,
 * constant CTEs inlined, CTE orders and unread CTEs dropped: src/sql/README.md, "Performance";
 * and the search forms for the trigram indexes: a needle's rare part, the split by the search
 * hours, the rare-trigram index's test, src/sql/postgres/search.ts and searchHours.ts) must never
 * change rows. Each query here is translated twice, with them (the search hours of now, every
 * source's messages given common trigrams and their rare-trigram function) and without them
 * (`optimise: false`), and both run on the same data: generated queries built to meet every
 * rewrite, the seeded endpoints, the benchmark scenarios and the dashboard's corpus.
 * Rows are compared as multisets: the rewrites may change the order of rows a query leaves unordered.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../seeds/queries.js';
import { DEFAULT_SOURCES } from '../../src/sources/defaults.js';
import { demoEvents } from '../../seeds/demo-events.js';
import { SCENARIOS } from '../../bench/queries.js';
import { searchHoursAt, type SourceLookup } from '../../src/sql/catalog.js';
import { translateQuery } from '../../src/sql/index.js';
import { trigramsOf } from '../../src/sql/postgres/trigrams.js';
import { rareTrigramsFunctionOf, rareTrigramsFunctionSql, trigramOpclass, trigramSchema } from '../../src/storage/searchIndexes.js';
import { insertEvents, loadSources, testDatabase } from '../support/db.js';
import { AIMED, FINAL_LIMIT, dashboardLogsAllQueries, generated, outcomeOf, withProject } from '../support/differentialQueries.js';
import type { TranslationOptions } from '../support/translation.js';

const P = `diff-${Date.now().toString(36)}`;
const NOW = Date.now();

type Row = Record<string, unknown>;

/** Translates `bq` with and without the rewrites, runs both, and compares the rows (or the Postgres error, when the data makes the query fail either way). */
async function assertSameRows(
  bq: string,
  options: TranslationOptions = {},
): Promise<{ rows: string[]; length: number; rewritten: boolean }> {
  const fast = await outcomeOf(bq, { ...options, optimise: true, searchHours: searchHoursAt(Date.now()), sources: searched });
  const plain = await outcomeOf(bq, { ...options, optimise: false });
  const caller = options.sandboxSql ?? bq;
  const unlimited = caller.replace(FINAL_LIMIT, '');
  if (unlimited !== caller && fast.rows.length === plain.rows.length && JSON.stringify(fast.rows) !== JSON.stringify(plain.rows)) {
    // `ORDER BY count DESC LIMIT 10` with ties may keep different rows of equal rank either way:
    // then both must be picks of the same size from the same rows without the LIMIT.
    const all = await assertSameRows(options.sandboxSql === undefined ? unlimited : bq, {
      ...options,
      ...(options.sandboxSql !== undefined && { sandboxSql: unlimited }),
    });
    const rows = new Set(all.rows);
    for (const row of [...fast.rows, ...plain.rows]) assert.ok(rows.has(row), `${row} is not a row of:\n${unlimited}`);
    return { rows: fast.rows, length: fast.rows.length, rewritten: passesRewrite(bq, options) };
  }
  assert.deepStrictEqual(fast.rows, plain.rows, `rows differ for:\n${caller}\n-- optimised:\n${fast.sql}\n-- plain:\n${plain.sql}`);
  return { rows: fast.rows, length: fast.rows.length, rewritten: passesRewrite(bq, options) };
}

/** Whether the passes alone (no search hours, no common trigrams) print `bq` otherwise than without them. */
function passesRewrite(bq: string, options: TranslationOptions): boolean {
  const print = (optimise: boolean) =>
    translateQuery({ query: bq, sources, sandboxSql: options.sandboxSql, maxRows: options.maxRows, optimise }).sql;
  return print(true) !== print(false);
}

/**
 * Common trigrams for every source's `event_message`: the words of the demo messages that most
 * of them hold, so the needles searched here meet each case of search.ts (all rare, a rare part
 * beside common words, all common and so not split by hours).
 */
const COMMON = [
  ...['https', 'supabase', 'statement', 'error', 'relation', 'exist', 'GET', 'Mozilla', 'AppleWebKit'].flatMap((w) => [
    ...trigramsOf(w, { padStart: true, padEnd: true }),
  ]),
];

const RARE = rareTrigramsFunctionOf(COMMON);

/** The catalog's sources once the fixtures are in (before()); `searched`: the same with COMMON and RARE on every source's messages. */
let sources: SourceLookup;
let searched: SourceLookup;

describe('differential: every rewrite for speed keeps the rows', function () {
  this.timeout(120_000);

  before(async () => {
    // A week of demo traffic of every default source under this test's project, and edge events
    // without a request, a response or any metadata, so the guards of missing records matter.
    for (const [source, events] of demoEvents(NOW, 400)) {
      await insertEvents(
        source,
        events.map((e) => withProject(e as Row, P)),
      );
    }
    await insertEvents('cloudflare.logs.prod', [
      {
        project: P,
        timestamp: new Date(NOW - 60_000).toISOString(),
        event_message: 'no request',
        metadata: { response: { status_code: 502 }, request: [] },
      },
      {
        project: P,
        timestamp: new Date(NOW - 120_000).toISOString(),
        event_message: 'no response',
        metadata: { request: { method: 'GET', path: '/rest/v1/x', url: `https://${P}.supabase.co/rest/v1/x` } },
      },
      { project: P, timestamp: new Date(NOW - 180_000).toISOString(), event_message: 'no metadata' },
    ]);
    sources = await loadSources();
    // The rare-trigram function of COMMON, as the upkeep creates it when it freezes a set: no index
    // here, so the optimised side tests `fn(event_message) @> …` on every row it reads.
    const { pool } = await testDatabase();
    const opclass = (await trigramOpclass(pool))!;
    await pool.query(rareTrigramsFunctionSql(RARE, trigramSchema(opclass), COMMON));
    searched = (name) => {
      const source = sources(name);
      return source && { ...source, commonTrigrams: { event_message: COMMON }, rareTrigramIndexes: { event_message: RARE } };
    };
  });

  it('when queries aimed at each rewrite run, then the rows are the same', async () => {
    for (const bq of AIMED) {
      const { length, rewritten } = await assertSameRows(bq, { params: { project: P } });
      assert.ok(length > 0, `no rows: ${bq}`);
      assert.ok(rewritten, `no rewrite applied, so nothing was compared: ${bq}`);
    }
  });

  it('when generated queries meet narrowing, path reads, guards, constant CTEs, CTE orders and unread CTEs, then the rows are the same', async () => {
    let withRows = 0;
    await fc.assert(
      fc.asyncProperty(generated, async (bq) => {
        if ((await assertSameRows(bq, { params: { project: P } })).length > 0) withRows++;
      }),
      { numRuns: 150 },
    );
    assert.ok(withRows >= 75, `only ${withRows} of 150 generated queries returned rows: the comparison would prove little`);
  });

  it('when the seeded endpoints run, with and without sandboxed sql reading each CTE, then the rows are the same', async () => {
    for (const interval of ['minutely', 'hourly', 'daily', '1hr', '1day', '7day']) {
      await assertSameRows(USAGE_API_COUNTS_SQL, { params: { interval, project: P } });
    }
    const window = {
      project: P,
      iso_timestamp_start: new Date(NOW - 3 * 86_400_000).toISOString(),
      iso_timestamp_end: new Date(NOW).toISOString(),
    };
    assert.ok((await assertSameRows(LOGS_ALL_SQL, { params: { project: P } })).length > 0);
    for (const { cte } of DEFAULT_SOURCES) {
      await assertSameRows(LOGS_ALL_SQL, {
        params: window,
        sandboxSql: `select id, timestamp, event_message from ${cte} order by timestamp desc limit 20`,
      });
      await assertSameRows(LOGS_ALL_SQL, {
        params: window,
        sandboxSql: `select count(*) as n, timestamp_trunc(timestamp, hour) as h from ${cte} group by h`,
      });
    }
  });

  it('when the benchmark scenarios run, then the rows are the same', async () => {
    for (const s of SCENARIOS) {
      const params = { ...s.params(NOW), project: P };
      const query = s.endpoint === 'logs.all' ? LOGS_ALL_SQL : USAGE_API_COUNTS_SQL;
      await assertSameRows(query, { params, ...(s.sql && { sandboxSql: s.sql }) });
    }
  });

  it('when the logs explorer searches a needle with a rare part, an all-rare one and a common word, then the rows are the same', async () => {
    const window = {
      project: P,
      iso_timestamp_start: new Date(NOW - 7 * 86_400_000).toISOString(),
      iso_timestamp_end: new Date(NOW + 60_000).toISOString(),
    };
    const explorer = (cte: string, needle: string) =>
      `select id, timestamp, event_message from ${cte} where regexp_contains(event_message, '${needle}') order by timestamp desc limit 100`;
    const cases: [string, string, RegExp][] = [
      // A rare part beside common words: the index gets the part, the needle is rechecked.
      [
        'edge_logs',
        'AppleWebKit/2373',
        /^(?=.*<@)(?=.*LIKE '%[^']*2373%'\) AND \(\("t\d+"."event_message" \|\| ''\) LIKE '%AppleWebKit\/2373%')/s,
      ],
      // All rare: as written, split by hours.
      ['edge_logs', 'Macintosh', /^(?=.*<@)(?!.*\|\| '')/s],
      // All common: the scan's form (strpos), not split.
      ['postgres_logs', 'error', /^(?!.*<@)(?=.*strpos\("t\d+"."event_message", 'error'\) > 0)/s],
      ['edge_logs', 'https://', /^(?!.*<@)(?=.*strpos\("t\d+"."event_message", 'https:\/\/'\) > 0)/s],
    ];
    for (const [cte, needle, shape] of cases) {
      const sandboxSql = explorer(cte, needle);
      const { length } = await assertSameRows(LOGS_ALL_SQL, { params: window, sandboxSql });
      assert.ok(length > 0, `no rows: ${sandboxSql}`);
      const { sql } = await outcomeOf(LOGS_ALL_SQL, {
        params: window,
        sandboxSql,
        searchHours: searchHoursAt(Date.now()),
        sources: searched,
      });
      assert.match(sql, shape, sql);
    }
  });

  it("when searches meet the rare-trigram index's test (literal needles, LIKE patterns, regexes, a needle known when the query runs), then the rows are the same", async () => {
    const window = {
      project: P,
      iso_timestamp_start: new Date(NOW - 7 * 86_400_000).toISOString(),
      iso_timestamp_end: new Date(NOW + 60_000).toISOString(),
    };
    const asked = /@> ARRAY\[/;
    const explorer = (test: string) => `select id, timestamp, event_message from edge_logs where ${test} order by timestamp desc limit 100`;
    // [the explorer's test, whether the index is asked, whether rows are expected]
    const sandboxed: [string, boolean, boolean][] = [
      [`regexp_contains(event_message, 'Macintosh')`, true, true],
      [`regexp_contains(event_message, 'AppleWebKit/2373')`, true, true],
      [`regexp_contains(event_message, 'Macin[a-z]osh\\\\W')`, true, true],
      // Its texts' trigrams are all common ones (AppleWebKit): nothing to ask.
      [`regexp_contains(event_message, 'Apple[A-Z]ebKit/\\\\d+')`, false, true],
      [`regexp_contains(event_message, '(?i)MACINTOSH; intel')`, true, true],
      [`regexp_contains(event_message, 'Macin?tosh')`, true, true],
      [`regexp_contains(event_message, 'Mac(intosh|OS)')`, true, true],
      [`regexp_contains(event_message, 'Macintosh|Windows')`, false, true],
      [`regexp_contains(event_message, 'x{0}Macintosh')`, true, true],
      [`event_message like '%Macintosh%Safari%'`, true, true],
      [`lower(event_message) like '%macintosh%'`, true, true],
      [`event_message like '%Macintosh_%'`, true, true],
      [`regexp_contains(event_message, 'Macintosh no such thing')`, true, false],
    ];
    for (const [test, index, rows] of sandboxed) {
      const sandboxSql = explorer(test);
      const { length } = await assertSameRows(LOGS_ALL_SQL, { params: window, sandboxSql });
      assert.equal(length > 0, rows, `${rows ? 'no' : 'some'} rows: ${sandboxSql}`);
      const { sql } = await outcomeOf(LOGS_ALL_SQL, { params: window, sandboxSql, sources: searched });
      assert.equal(asked.test(sql) && sql.includes(RARE), index, sql);
    }
    // A needle known when the query runs: the index's test computed by Postgres from the pattern.
    const byParameter = `select id from \`cloudflare.logs.prod\` where project = @project and regexp_contains(event_message, @needle)`;
    for (const [needle, rows] of [
      ['Macintosh', true],
      ['AppleWebKit/2373', true],
      ['Mac', true],
      ['', true],
      ['Mac.ntosh', true],
      ['100%_sure', false],
    ] as const) {
      const { length } = await assertSameRows(byParameter, { params: { project: P, needle } });
      assert.equal(length > 0, rows, needle);
    }
    const { sql } = await outcomeOf(byParameter, { params: { project: P, needle: 'x' }, sources: searched });
    assert.match(sql, /cardinality\(logs\.search_inner_trigrams\(logs\.search_rare_trigrams_[0-9a-f]{12}\(/, sql);
  });

  it("when the dashboard's queries run, then the rows are the same", async () => {
    const window = {
      project: P,
      iso_timestamp_start: new Date(NOW - 7 * 86_400_000).toISOString(),
      iso_timestamp_end: new Date(NOW + 60_000).toISOString(),
    };
    const queries = dashboardLogsAllQueries();
    for (const sql of queries) await assertSameRows(LOGS_ALL_SQL, { params: window, sandboxSql: sql });
    assert.ok(queries.length > 200, `${queries.length} dashboard queries compared`);
  });
});
