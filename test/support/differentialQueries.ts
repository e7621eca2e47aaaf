/**
 * Queries and data shaping shared by the differential tests (test/sql/differential.test.ts: the
 * rewrites for speed; test/sql/hot-differential.test.ts: hot leaves): generated queries over the
 * edge logs shaped to meet each rewrite, and one query aimed at each.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { reproject } from './projects.js';
import { runTranslation, type TranslationOptions } from './translation.js';

type Row = Record<string, unknown>;

// ── generated queries over the edge logs, shaped to meet each rewrite ──────────────

const unnestJoin = fc.constantFrom('cross join', 'left join');
const on = (join: string) => (join === 'left join' ? ' on true' : '');
const key = fc.constantFrom('r.method', 'r.path', 's.status_code', 'timestamp_trunc(w.timestamp, day)', 'm.project', 'w.project');
const aggregate = fc.constantFrom(
  'count(*)',
  'countif(s.status_code >= 500)',
  'count(distinct case when s.status_code >= 400 then w.id end)',
  'sum(s.status_code)',
  'max(r.path)',
  "countif(r.method = 'GET' and s.status_code < 300)",
  'min(w.timestamp)',
  'avg(s.origin_time)',
  "string_agg(distinct r.method, ',' order by r.method)",
  'count(r.path)',
  'count(w.id)',
  "countif(regexp_contains(r.path, '/rest'))",
  'any_value(s.status_code) is not null',
  "countif(cast(r.method as string) like 'P%' or s.status_code is null)",
);
const condition = fc.constantFrom(
  's.status_code >= 500',
  "r.method = 'GET'",
  "r.path like '%rest%'",
  's.status_code is null',
  "(r.method = 'POST' or s.status_code < 300)",
  'w.timestamp > timestamp_sub(current_timestamp(), interval 2 day)',
  'w.timestamp >= (select v from k)',
  'regexp_contains(r.url, @project)',
  'r.path is not null and s.status_code != 404',
  'true',
  // message search (src/sql/postgres/search.ts): LIKE for a literal, ILIKE for lower(x) LIKE
  "regexp_contains(w.event_message, 'GET')",
  "lower(r.path) like '%rest%'",
  "regexp_contains(r.path, 'v1/')",
);
export const generated = fc
  .record({
    ordered: fc.boolean(),
    joins: fc.tuple(unnestJoin, unnestJoin, unnestJoin),
    aggregating: fc.boolean(),
    keys: fc.uniqueArray(key, { minLength: 1, maxLength: 2 }),
    aggregates: fc.uniqueArray(aggregate, { minLength: 1, maxLength: 3 }),
    where: fc.option(fc.uniqueArray(condition, { minLength: 1, maxLength: 2 }), { nil: undefined }),
    limit: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
    unread: fc.boolean(),
  })
  .map((g) => {
    const [j1, j2, j3] = g.joins;
    const ctes = [
      `w as (select t.timestamp, t.id, t.project, t.event_message, t.metadata from \`cloudflare.logs.prod\` t where t.project = @project${g.ordered ? ' order by t.timestamp desc' : ''})`,
      'k as (select timestamp_sub(current_timestamp(), interval 3 day) as v)',
      ...(g.unread ? ['unread as (select count(*) as n from `postgres.logs` where project = @project)'] : []),
    ];
    const from = `w ${j1} unnest(w.metadata) as m${on(j1)} ${j2} unnest(m.request) as r${on(j2)} ${j3} unnest(m.response) as s${on(j3)}`;
    const where = g.where ? ` where ${g.where.join(' and ')}` : '';
    const select = g.aggregating
      ? `select ${g.keys.map((k, i) => `${k} as k${i}`).join(', ')}, ${g.aggregates.map((a, i) => `${a} as a${i}`).join(', ')} from ${from}${where} group by ${g.keys.map((_, i) => i + 1).join(', ')}`
      : `select w.id, w.timestamp, ${g.keys.map((k, i) => `${k} as k${i}`).join(', ')} from ${from}${where} order by w.timestamp desc, w.id${g.limit ? ` limit ${g.limit}` : ''}`;
    return `with ${ctes.join(', ')} ${select}`;
  });

export const W =
  'with w as (select t.timestamp, t.id, t.project, t.event_message, t.metadata from `cloudflare.logs.prod` t where t.project = @project order by t.timestamp desc), k as (select timestamp_sub(current_timestamp(), interval 3 day) as v)';
const EDGE_FROM = 'w cross join unnest(w.metadata) as m cross join unnest(m.request) as r cross join unnest(m.response) as s';
/** One query aimed at each rewrite (the generator may or may not meet each combination). */
export const AIMED = [
  // narrowed aggregate: guarded records moved out, with a column of the table beside them
  `${W} select r.method as k0, count(distinct case when s.status_code >= 400 then w.id end) as a0, count(*) as a1 from ${EDGE_FROM} group by 1`,
  // narrowed aggregate: one leaf read for several tests, and a leaf only behind AND
  `${W} select timestamp_trunc(w.timestamp, day) as k0, countif(s.status_code >= 500) as a0, countif(s.status_code < 400) as a1, countif(r.method = 'GET' and s.status_code = 200) as a2 from ${EDGE_FROM} group by 1`,
  // path reads with CROSS and LEFT joins, a guard implied by a strict comparison, and one that is not
  `${W} select w.id, r.path, s.status_code from w left join unnest(w.metadata) as m on true left join unnest(m.request) as r on true cross join unnest(m.response) as s where s.status_code >= 400 or r.path is null order by w.timestamp desc, w.id`,
  // a constant CTE read by a scalar subquery
  `${W} select count(*) as n from w where w.timestamp >= (select v from k)`,
  // a CTE order dropped under an aggregating reader, kept under a LIMIT
  `${W} select count(*) as n, max(w.timestamp) as last from w`,
  `${W} select w.id from w limit 7`,
  // message search over the message and over leaves (hot columns in hot-differential.test.ts)
  `${W} select w.id, r.path from ${EDGE_FROM} where regexp_contains(w.event_message, 'GET') and (lower(r.path) like '%rest%' or regexp_contains(r.url, '_')) order by w.timestamp desc, w.id`,
  // names the CTE of one source's events does not select: NULL (src/sql/resolve/events.ts), also in a CTE read twice
  `${W} select w.id, identifier as k0, w.no_such_field as k1, w.metadata is not null as k2 from w order by w.timestamp desc, w.id limit 20`,
  `${W} select count(*) as n, countif(no_such_field is null) as a0 from w where w.id in (select id from w where identifier is null)`,
  // counts of NOT NULL columns as counts of rows, beside one of a leaf and a DISTINCT one that must stay
  `${W} select timestamp_trunc(w.timestamp, hour) as k0, count(w.id) as a0, count(w.timestamp) as a1, count(r.path) as a2, count(distinct w.id) as a3 from ${EDGE_FROM} group by 1`,
  // unread CTEs
  `${W}, unread as (select count(*) as n from \`postgres.logs\` where project = @project) select count(*) as n from w`,
  // the function library (src/sql/library/) under the rewrites: a narrowed aggregate of approximate
  // aggregates, ordered and limited aggregates, a zone-aware truncation
  `${W} select timestamp_trunc(w.timestamp, hour, 'America/New_York') as k0, approx_count_distinct(r.path) as a0, approx_top_count(s.status_code, 3) as a1,
     string_agg(r.method, ',' order by r.method limit 3) as a2, array_agg(r.path ignore nulls order by r.path limit 2) as a3,
     approx_top_sum(r.method, s.status_code, 2) as a4 from ${EDGE_FROM} group by 1`,
  // navigation with IGNORE NULLS and percentiles over partitions
  `${W} select w.id, percentile_cont(s.status_code, 0.5) over (partition by r.method) as p, percentile_disc(r.path, 0.9) over (partition by s.status_code) as q,
     last_value(r.path ignore nulls) over (order by w.timestamp, w.id rows between 3 preceding and current row) as l
     from w left join unnest(w.metadata) as m on true left join unnest(m.request) as r on true left join unnest(m.response) as s on true order by w.timestamp desc, w.id limit 60`,
  // JSON, dates and arrays per row, UNNEST WITH OFFSET, and empty buckets filled by GENERATE_TIMESTAMP_ARRAY
  `${W} select w.id, to_json_string(r) as a, format_timestamp('%F %T', w.timestamp, 'Europe/Paris') as b, date_diff(date(w.timestamp), date '2020-01-01', week(monday)) as c,
     json_query(to_json_string(m), '$.request') as d, array_to_string(array_reverse(split(r.path, '/')), '|') as e
     from w cross join unnest(w.metadata) as m left join unnest(m.request) as r on true order by w.timestamp desc, w.id limit 40`,
  `${W} select b, count(w.id) as n from unnest(generate_timestamp_array((select timestamp_trunc(min(timestamp), hour) from w), (select timestamp_trunc(max(timestamp), hour) from w), interval 1 hour)) as b
     left join w on timestamp_trunc(w.timestamp, hour) = b group by b`,
  `${W} select part, o, count(*) as n from w cross join unnest(w.metadata) as m cross join unnest(m.request) as r cross join unnest(split(r.path, '/')) as part with offset as o group by 1, 2`,
  // the function library (src/sql/library/) inside a narrowed aggregate and over guarded records
  `${W} select net.host(r.url) as k0, count(*) as a0, countif(strpos(r.path, '/rest') > 0) as a1, max(length(substr(r.path, -4))) as a2, sum(safe_add(s.status_code, 1)) as a3 from ${EDGE_FROM} group by 1`,
  // the TIME and JSON types per row, in a narrowed aggregate and over guarded records
  `${W} select time_trunc(time(w.timestamp), hour) as k0, count(*) as a0, max(time_diff(time(w.timestamp), time '00:00:00', second)) as a1,
     countif(lax_int64(json_query(to_json(r), '$.method')) is null) as a2, max(format_time('%R', time_add(time(w.timestamp), interval 90 minute))) as a3,
     min(string(w.timestamp, 'Asia/Kolkata')) as a4 from ${EDGE_FROM} group by 1`,
  `${W} select w.id, json_set(to_json(r), '$.status', s.status_code, '$.seen[1]', true) as k0, json_keys(to_json(m), 2) as k1,
     json_object('path', r.path, 'code', s.status_code) as k2, json_strip_nulls(json_array(r.path, null, s.status_code)) as k3,
     json_remove(to_json(r), '$.url') as k4, lax_string(json_query(to_json(s), '$.status_code')) as k5, cast(time(w.timestamp) as string) as k6
     from ${EDGE_FROM} where extract(hour from time(w.timestamp)) >= 0 order by w.timestamp desc, w.id limit 80`,
  // the RANGE type (migrations/1764880000000_bigquery-range-functions.js) as a group key, inside a narrowed aggregate and per row
  `${W} select range(timestamp_trunc(w.timestamp, hour), timestamp_add(timestamp_trunc(w.timestamp, hour), interval 1 hour)) as k0, count(*) as a0,
     countif(range_contains(range<timestamp> '[2020-01-01 00:00:00, UNBOUNDED)', w.timestamp) and s.status_code >= 400) as a1,
     min(cast(range(date(w.timestamp), date_add(date(w.timestamp), interval 1 day)) as string)) as a2,
     max(range(date(w.timestamp), null)) as a3 from ${EDGE_FROM} group by 1`,
  `${W} select w.id, cast(range(w.timestamp, timestamp_add(w.timestamp, interval 1 minute)) as string) as k0, to_json_string(range(date(w.timestamp), null)) as k1,
     array_length(generate_range_array(range(timestamp_trunc(w.timestamp, day), timestamp_add(timestamp_trunc(w.timestamp, day), interval 1 day)), interval 6 hour)) as k2,
     range_start(range_intersect(range(w.timestamp, null), range<timestamp> '[UNBOUNDED, 2999-01-01 00:00:00)')) = w.timestamp as k3, r.path as k4
     from ${EDGE_FROM} where range_overlaps(range(w.timestamp, null), range<timestamp> '[2020-01-01 00:00:00, UNBOUNDED)') order by w.timestamp desc, w.id limit 40`,
  // hash, BYTES, NET and aggregate functions of migrations 1764810000000–3000 inside a narrowed aggregate and per row
  `${W} select net.reg_domain(r.url) as k0, net.public_suffix(r.url) as k1, count(*) as a0, max_by(r.path, s.status_code) as a1, min_by(w.id, w.timestamp) as a2,
     array_length(array_concat_agg(split(r.path, '/') order by w.timestamp, w.id)) as a3, countif(mod(abs(farm_fingerprint(w.id)), 4) = 0) as a4 from ${EDGE_FROM} group by 1, 2`,
  `${W} select w.id, to_hex(sha1(w.event_message)) as k0, farm_fingerprint(r.path) as k1,
     net.ip_to_string(net.ip_trunc(net.safe_ip_from_string(regexp_extract(w.event_message, r'[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+')), 24)) as k2,
     net.ipv4_to_int64(net.safe_ip_from_string(regexp_extract(w.event_message, r'[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+'))) as k3, to_base32(cast(r.method as bytes)) as k4
     from ${EDGE_FROM} order by w.timestamp desc, w.id limit 50`,
  `${W} select w.id, regexp_extract(r.path, r'^/([a-z]+)/v[0-9]') as k0, split(r.path, '/')[safe_offset(1)] as k1, greatest(s.status_code, 300) as k2, safe.substr(w.event_message, -5, 3) as k3, instr(r.url, '/', -1) as k4, lpad(cast(s.status_code as string), 5, '0') as k5 from ${EDGE_FROM} where regexp_contains(r.path, r'[a-z0-9-.]+') order by w.timestamp desc, w.id`,
];

/** The demo event under `project`, its request URLs on that project's host (the usage query matches them). */
export function withProject(event: Row, project: string): Row {
  const out = reproject(event, () => project);
  const metadata = out.metadata as Row | undefined;
  const request = metadata?.request as Row | undefined;
  if (metadata && request && typeof request.url === 'string') {
    out.metadata = { ...metadata, request: { ...request, url: request.url.replace(/https:\/\/[^.]+\./, `https://${project}.`) } };
  }
  return out;
}

/** A query's rows in a comparable form: each row as JSON, sorted (row order is compared only where ORDER BY fixes it). */
export const canonical = (rows: Row[]): string[] => rows.map((r) => JSON.stringify(r)).sort();

/** A trailing `LIMIT n`: with ties at the cut, two correct plans may keep different rows of equal rank. */
export const FINAL_LIMIT = /\blimit\s+\d+\s*;?\s*$/i;

/**
 * The outcome of translating and running `bq`: its canonical rows and SQL, or the Postgres error
 * as the one "row" (when the data makes the query fail, it must fail the same way both ways).
 */
export function outcomeOf(bq: string, options: TranslationOptions): Promise<{ rows: string[]; sql: string }> {
  return runTranslation(bq, options).then(
    ({ rows, translation }) => ({ rows: canonical(rows), sql: translation.sql }),
    (e: { code?: string; message?: string }) => {
      if (!e.code) throw e;
      return { rows: [`error ${e.code}: ${e.message}`], sql: '' };
    },
  );
}

/** The dashboard's sandboxed queries of `logs.all` that answer rows (test/compat/studio/queries.json). */
export function dashboardLogsAllQueries(): string[] {
  const queries: { sql: string | null; endpoint: string; expect: unknown }[] = JSON.parse(
    readFileSync(new URL('../compat/studio/queries.json', import.meta.url), 'utf8'),
  );
  return queries.filter((q) => q.endpoint === 'logs.all' && q.sql !== null && q.expect === 'ok').map((q) => q.sql!);
}
