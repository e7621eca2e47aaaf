/**
 * BigQuery in → Postgres out, for the rewrites whose shape matters (speed, pruning, semantics).
 * The rows these produce are checked on Postgres in the other files; this pins the text.
 */
import assert from 'node:assert/strict';
import { initTranslator, translateQuery } from '../../src/sql/index.js';
import type { SourceTable } from '../../src/sources/schema.js';
import { sampleSources } from '../support/translation.js';

const sources = sampleSources();

const cases: [name: string, bq: string, postgres: string, maxRows?: number][] = [
  [
    'a literal regex without metacharacters becomes LIKE (% and _ escaped, for a trigram index); a real regex stays ~',
    "select regexp_contains(event_message, '/rest') as a, regexp_contains(event_message, r'^GET') as b, regexp_contains(event_message, '50%_off') as c from `cloudflare.logs.prod`",
    `SELECT ("t0"."event_message" LIKE '%/rest%') AS "a", ("t0"."event_message" ~ '^GET') AS "b", ("t0"."event_message" LIKE '%50\\%\\_off%') AS "c"
FROM "logs"."cloudflare_logs_prod" AS "t0"`,
  ],
  [
    'CROSS JOIN UNNEST of single records reads by path, with one not-null guard (the deepest implies the others)',
    'select r.path from `cloudflare.logs.prod` t cross join unnest(t.metadata) m cross join unnest(m.request) r',
    `SELECT (((("t0"."metadata" -> 0) -> 'request') -> 0) ->> 'path') AS "path"
FROM "logs"."cloudflare_logs_prod" AS "t0"
WHERE (((("t0"."metadata" -> 0) -> 'request') -> 0) IS NOT NULL)`,
  ],
  [
    'LEFT JOIN UNNEST … ON TRUE reads by path without a guard; INT64 leaves are cast',
    'select r.status_code from `cloudflare.logs.prod` t left join unnest(t.metadata) m on true left join unnest(m.response) r on true',
    `SELECT ((((("t0"."metadata" -> 0) -> 'response') -> 0) ->> 'status_code'))::bigint AS "status_code"
FROM "logs"."cloudflare_logs_prod" AS "t0"`,
  ],
  [
    'GROUP BY and ORDER BY a select alias become ordinals; truncation is in UTC',
    'select timestamp_trunc(timestamp, hour) as timestamp, count(*) as n from `postgres.logs` group by timestamp order by timestamp',
    `SELECT date_bin(('1 hour')::interval, "t0"."timestamp", ('1970-01-01 00:00:00+00')::timestamptz) AS "timestamp", count(*) AS "n"
FROM "logs"."postgres_logs" AS "t0"
GROUP BY 1
ORDER BY 1 ASC`,
  ],
  [
    'a real array is unnested laterally; parameters are text placeholders',
    'select a from `gotrue.logs.prod` t cross join unnest(t.metadata) m cross join unnest(m.args) a where t.project = @project',
    `SELECT "t2"."value" AS "a"
FROM "logs"."gotrue_logs_prod" AS "t0"
  CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN (jsonb_typeof((("t0"."metadata" -> 0) -> 'args')) = 'array') THEN (("t0"."metadata" -> 0) -> 'args') END) AS "t2"("value")
WHERE ((("t0"."metadata" -> 0) IS NOT NULL) AND ("t0"."project" = $1::text))`,
  ],
  [
    'an aggregate over JSON leaves computes them in an inner query fenced by OFFSET NULL',
    'select r.method, count(*) as n from `deno-relay-logs` t cross join unnest(t.metadata) m cross join unnest(m.request) r group by r.method',
    `SELECT ("t3"."c0" ->> 'method') AS "method", count(*) AS "n"
FROM (SELECT ((("t0"."metadata" -> 0) -> 'request') -> 0) AS "c0"
FROM "logs"."deno_relay_logs" AS "t0"
OFFSET NULL) AS "t3"
WHERE ("t3"."c0" IS NOT NULL)
GROUP BY ("t3"."c0" ->> 'method')`,
  ],
  [
    'an aggregate over a guarded record whose inner columns could fail keeps the guard inside',
    'select r.method, sum(cast(t.event_message as int64)) as n from `deno-relay-logs` t cross join unnest(t.metadata) m cross join unnest(m.request) r group by r.method',
    `SELECT "t3"."c0" AS "method", (sum("t3"."c1"))::bigint AS "n"
FROM (SELECT (((("t0"."metadata" -> 0) -> 'request') -> 0) ->> 'method') AS "c0", logs.bq_int64("t0"."event_message") AS "c1"
FROM "logs"."deno_relay_logs" AS "t0"
WHERE (((("t0"."metadata" -> 0) -> 'request') -> 0) IS NOT NULL)
OFFSET NULL) AS "t3"
GROUP BY "t3"."c0"`,
  ],
  ['division is floating point', 'select 7 / 2 as x', 'SELECT ((7)::float8 / 2) AS "x"'],
  ['maxRows lowers a larger LIMIT', 'select 1 as x limit 5000', 'SELECT 1 AS "x"\nLIMIT 1000', 1000],
  ['maxRows adds a LIMIT', 'select 1 as x', 'SELECT 1 AS "x"\nLIMIT 10', 10],
  ['maxRows keeps a smaller LIMIT', 'select 1 as x limit 3', 'SELECT 1 AS "x"\nLIMIT 3', 10],
];

describe('printed Postgres', () => {
  before(() => initTranslator());
  for (const [name, bq, expected, maxRows] of cases) {
    it(`when ${name}, then the SQL is as pinned`, () => {
      assert.equal(translateQuery({ query: bq, sources, maxRows }).sql, expected);
    });
  }

  it('when UNION ALL joins a single-record source and a real array, then UNNEST of the column is lateral', () => {
    const record = (single: boolean): SourceTable['fields'] => ({
      metadata: { type: 'RECORD', repeated: true, single, fields: { level: { type: 'STRING', repeated: false } } },
    });
    const tables: Record<string, SourceTable> = {
      one: { name: 'one', pgSchema: 'logs', table: 'one', fields: record(true) },
      many: { name: 'many', pgSchema: 'logs', table: 'many', fields: record(false) },
    };
    const bq =
      'with u as (select metadata from one union all select metadata from many) select m.level from u cross join unnest(u.metadata) as m';
    const sql = translateQuery({ query: bq, sources: (name) => tables[name] }).sql;
    assert.match(sql, /CROSS JOIN LATERAL jsonb_array_elements\(/);
    const single = translateQuery({ query: bq.replace('from many', 'from one'), sources: (name) => tables[name] }).sql;
    assert.doesNotMatch(single, /jsonb_array_elements/);
  });

  it('when a query uses parameters, then each @name is listed once in $n order', () => {
    const t = translateQuery({ query: 'select @b as b, @a as a, @b as c', sources });
    assert.deepStrictEqual(t.parameters, ['b', 'a']);
    assert.equal(t.sql, 'SELECT $1::text AS "b", $2::text AS "a", $1::text AS "c"');
  });
});
