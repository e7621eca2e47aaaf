/**
 * Studio's report queries, as the dashboard sends them to `logs.all` (`sql=`, with `project`,
 * `iso_timestamp_start` and `iso_timestamp_end`): the default query of each chart and table of
 * its API report page, its shared-API pages (Auth, Realtime, PostgREST), and its Storage and Auth
 * report pages, copied from the dashboard corpus (test/compat/studio/queries.json, where
 * test/endpoints/studio-reports.test.ts checks they are still the same text).
 * src/query/reportWarmup.ts keeps their hours computed for the busiest projects, so a report
 * page's first load reads kept hours (docs/ARCHITECTURE.md, "Hourly partials"). The
 * edge-functions report is not here: its source names its project in `metadata`, not in the
 * column the warm-up lists projects from.
 */
export const STUDIO_REPORTS: ReadonlyArray<{ readonly id: string; readonly sql: string }> = [
  {
    id: 'reports/api/totalRequests',
    sql: '\n        -- reports-api-total-requests\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          count(t.id) as count\n        FROM edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          \n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC',
  },
  {
    id: 'reports/api/topRoutes',
    sql: '\n        -- reports-api-top-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          \n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          count desc\n        limit 10\n        ',
  },
  {
    id: 'reports/api/errorCounts',
    sql: '\n        -- reports-api-error-counts\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          count(t.id) as count\n        FROM edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        WHERE\n          response.status_code >= 400\n        \n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n        ',
  },
  {
    id: 'reports/api/topErrorRoutes',
    sql: '\n        -- reports-api-top-error-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        where\n          response.status_code >= 400\n        \n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          count desc\n        limit 10\n        ',
  },
  {
    id: 'reports/api/responseSpeed',
    sql: '\n        -- reports-api-response-speed\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          avg(response.origin_time) as avg\n        FROM\n          edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          \n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n      ',
  },
  {
    id: 'reports/api/topSlowRoutes',
    sql: '\n        -- reports-api-top-slow-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count,\n          avg(response.origin_time) as avg\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        \n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          avg desc\n        limit 10\n        ',
  },
  {
    id: 'reports/api/networkTraffic',
    sql: '\n        -- reports-api-network-traffic\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          coalesce(\n            safe_divide(\n              sum(\n                cast(coalesce(headers.content_length, "0") as int64)\n              ),\n              1000000\n            ),\n            0\n          ) as ingress_mb,\n          coalesce(\n            safe_divide(\n              sum(\n                cast(coalesce(resp_headers.content_length, "0") as int64)\n              ),\n              1000000\n            ),\n            0\n          ) as egress_mb,\n        FROM\n          edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          cross join unnest(response.headers) as resp_headers\n          \n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n        ',
  },
  {
    id: 'reports/api/requestsByCountry',
    sql: '\n        -- reports-api-requests-by-country\n        select\n          cf.country as country,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          cross join unnest(request.cf) as cf\n        where\n          cf.country is not null\n        \n        group by\n          cf.country\n        ',
  },
  {
    id: 'reports/shared-api/auth/totalRequests',
    sql: "\n        --reports-api-total-requests\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          count(t.id) as count\n        FROM edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/auth')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC",
  },
  {
    id: 'reports/shared-api/auth/topRoutes',
    sql: "\n        -- reports-api-top-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/auth')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          count desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/auth/errorCounts',
    sql: "\n        -- reports-api-error-counts\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          count(t.id) as count\n        FROM edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        WHERE\n          response.status_code >= 400\n        AND REGEXP_CONTAINS(`request`.`path`, '/auth')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n        ",
  },
  {
    id: 'reports/shared-api/auth/topErrorRoutes',
    sql: "\n        -- reports-api-top-error-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        where\n          response.status_code >= 400\n        AND REGEXP_CONTAINS(`request`.`path`, '/auth')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          count desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/auth/responseSpeed',
    sql: "\n        -- reports-api-response-speed\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          avg(response.origin_time) as avg\n        FROM\n          edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/auth')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n      ",
  },
  {
    id: 'reports/shared-api/auth/topSlowRoutes',
    sql: "\n        -- reports-api-top-slow-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count,\n          avg(response.origin_time) as avg\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        WHERE REGEXP_CONTAINS(`request`.`path`, '/auth')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          avg desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/auth/networkTraffic',
    sql: '\n        -- reports-api-network-traffic\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          coalesce(\n            safe_divide(\n              sum(\n                cast(coalesce(headers.content_length, "0") as int64)\n              ),\n              1000000\n            ),\n            0\n          ) as ingress_mb,\n          coalesce(\n            safe_divide(\n              sum(\n                cast(coalesce(resp_headers.content_length, "0") as int64)\n              ),\n              1000000\n            ),\n            0\n          ) as egress_mb,\n        FROM\n          edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          cross join unnest(response.headers) as resp_headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, \'/auth\')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n        ',
  },
  {
    id: 'reports/shared-api/realtime/totalRequests',
    sql: "\n        --reports-api-total-requests\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          count(t.id) as count\n        FROM edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/realtime')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC",
  },
  {
    id: 'reports/shared-api/realtime/topRoutes',
    sql: "\n        -- reports-api-top-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/realtime')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          count desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/realtime/errorCounts',
    sql: "\n        -- reports-api-error-counts\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          count(t.id) as count\n        FROM edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        WHERE\n          response.status_code >= 400\n        AND REGEXP_CONTAINS(`request`.`path`, '/realtime')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n        ",
  },
  {
    id: 'reports/shared-api/realtime/topErrorRoutes',
    sql: "\n        -- reports-api-top-error-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        where\n          response.status_code >= 400\n        AND REGEXP_CONTAINS(`request`.`path`, '/realtime')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          count desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/realtime/responseSpeed',
    sql: "\n        -- reports-api-response-speed\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          avg(response.origin_time) as avg\n        FROM\n          edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/realtime')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n      ",
  },
  {
    id: 'reports/shared-api/realtime/topSlowRoutes',
    sql: "\n        -- reports-api-top-slow-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count,\n          avg(response.origin_time) as avg\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        WHERE REGEXP_CONTAINS(`request`.`path`, '/realtime')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          avg desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/realtime/networkTraffic',
    sql: '\n        -- reports-api-network-traffic\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          coalesce(\n            safe_divide(\n              sum(\n                cast(coalesce(headers.content_length, "0") as int64)\n              ),\n              1000000\n            ),\n            0\n          ) as ingress_mb,\n          coalesce(\n            safe_divide(\n              sum(\n                cast(coalesce(resp_headers.content_length, "0") as int64)\n              ),\n              1000000\n            ),\n            0\n          ) as egress_mb,\n        FROM\n          edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          cross join unnest(response.headers) as resp_headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, \'/realtime\')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n        ',
  },
  {
    id: 'reports/shared-api/postgrest/totalRequests',
    sql: "\n        --reports-api-total-requests\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          count(t.id) as count\n        FROM edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/rest')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC",
  },
  {
    id: 'reports/shared-api/postgrest/topRoutes',
    sql: "\n        -- reports-api-top-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/rest')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          count desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/postgrest/errorCounts',
    sql: "\n        -- reports-api-error-counts\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          count(t.id) as count\n        FROM edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        WHERE\n          response.status_code >= 400\n        AND REGEXP_CONTAINS(`request`.`path`, '/rest')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n        ",
  },
  {
    id: 'reports/shared-api/postgrest/topErrorRoutes',
    sql: "\n        -- reports-api-top-error-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        where\n          response.status_code >= 400\n        AND REGEXP_CONTAINS(`request`.`path`, '/rest')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          count desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/postgrest/responseSpeed',
    sql: "\n        -- reports-api-response-speed\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          avg(response.origin_time) as avg\n        FROM\n          edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, '/rest')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n      ",
  },
  {
    id: 'reports/shared-api/postgrest/topSlowRoutes',
    sql: "\n        -- reports-api-top-slow-routes\n        select\n          request.path as path,\n          request.method as method,\n          request.search as search,\n          response.status_code as status_code,\n          count(t.id) as count,\n          avg(response.origin_time) as avg\n        from edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n        WHERE REGEXP_CONTAINS(`request`.`path`, '/rest')\n        group by\n          request.path, request.method, request.search, response.status_code\n        order by\n          avg desc\n        limit 10\n        ",
  },
  {
    id: 'reports/shared-api/postgrest/networkTraffic',
    sql: '\n        -- reports-api-network-traffic\n        select\n          cast(timestamp_trunc(t.timestamp, hour) as datetime) as timestamp,\n          coalesce(\n            safe_divide(\n              sum(\n                cast(coalesce(headers.content_length, "0") as int64)\n              ),\n              1000000\n            ),\n            0\n          ) as ingress_mb,\n          coalesce(\n            safe_divide(\n              sum(\n                cast(coalesce(resp_headers.content_length, "0") as int64)\n              ),\n              1000000\n            ),\n            0\n          ) as egress_mb,\n        FROM\n          edge_logs t\n          cross join unnest(metadata) as m\n          cross join unnest(m.response) as response\n          cross join unnest(m.request) as request\n          cross join unnest(request.headers) as headers\n          cross join unnest(response.headers) as resp_headers\n          WHERE REGEXP_CONTAINS(`request`.`path`, \'/rest\')\n        GROUP BY\n          timestamp\n        ORDER BY\n          timestamp ASC\n        ',
  },
  {
    id: 'reports/storage/cacheHitRate',
    sql: "\n        -- reports-storage-cache-hit-rate\nSELECT\n  timestamp_trunc(timestamp, hour) as timestamp,\n  countif( h.cf_cache_status in ('HIT', 'STALE', 'REVALIDATED', 'UPDATING') ) as hit_count,\n  countif( h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC') ) as miss_count\nfrom edge_logs f\n  cross join unnest(f.metadata) as m\n  cross join unnest(m.request) as r\n  cross join unnest(m.response) as res\n  cross join unnest(res.headers) as h\nwhere starts_with(r.path, '/storage/v1/object') and r.method = 'GET'\n  \ngroup by timestamp\norder by timestamp desc\n",
  },
  {
    id: 'reports/storage/topCacheMisses',
    sql: "\n        -- reports-storage-top-cache-misses\nSELECT\n  r.path as path,\n  r.search as search,\n  count(id) as count\nfrom edge_logs f\n  cross join unnest(f.metadata) as m\n  cross join unnest(m.request) as r\n  cross join unnest(m.response) as res\n  cross join unnest(res.headers) as h\nwhere starts_with(r.path, '/storage/v1/object')\n  and r.method = 'GET'\n  and h.cf_cache_status in ('MISS', 'NONE/UNKNOWN', 'EXPIRED', 'BYPASS', 'DYNAMIC')\n  \ngroup by path, search\norder by count desc\nlimit 12\n    ",
  },
  {
    id: 'reports/auth/ActiveUsers',
    sql: "\n        --active-users\n        select\n          timestamp_trunc(timestamp, hour) as timestamp,\n          \n          count(distinct json_value(f.event_message, \"$.auth_event.actor_id\")) as count\n        from auth_logs f\n        where json_value(f.event_message, \"$.auth_event.action\") in (\n          'login', 'user_signedup', 'token_refreshed', 'user_modified',\n          'user_recovery_requested', 'user_reauthenticate_requested'\n        )\n        \n        group by timestamp\n        order by timestamp desc\n      ",
  },
  {
    id: 'reports/auth/SignInAttempts',
    sql: '\n        --sign-in-attempts\n        SELECT\n          timestamp_trunc(timestamp, hour) as timestamp,\n          \n          CASE\n            WHEN JSON_VALUE(event_message, "$.provider") IS NOT NULL\n                AND JSON_VALUE(event_message, "$.provider") != \'\'\n            THEN CONCAT(\n              JSON_VALUE(event_message, "$.login_method"),\n              \' (\',\n              JSON_VALUE(event_message, "$.provider"),\n              \')\'\n            )\n            ELSE JSON_VALUE(event_message, "$.login_method")\n          END as login_type_provider,\n          COUNT(*) as count\n        FROM\n          auth_logs\n        WHERE\n          JSON_VALUE(event_message, "$.action") = \'login\'\n          AND JSON_VALUE(event_message, "$.metering") = "true"\n          \n        GROUP BY\n          timestamp, login_type_provider\n        ORDER BY\n          timestamp desc, login_type_provider\n      ',
  },
  {
    id: 'reports/auth/PasswordResetRequests',
    sql: '\n        --password-reset-requests\n        select\n          timestamp_trunc(timestamp, hour) as timestamp,\n          \n          count(*) as count\n        from auth_logs f\n        where json_value(f.event_message, "$.auth_event.action") = \'user_recovery_requested\'\n        \n        group by timestamp\n        order by timestamp desc\n      ',
  },
  {
    id: 'reports/auth/TotalSignUps',
    sql: '\n        --total-signups\n        select\n          timestamp_trunc(timestamp, hour) as timestamp,\n          \n          count(*) as count\n        from auth_logs\n        where json_value(event_message, "$.auth_event.action") = \'user_signedup\'\n        \n        group by timestamp\n        order by timestamp desc\n      ',
  },
  {
    id: 'reports/auth/SignInProcessingTimeBasic',
    sql: '\n        --signin-processing-time-basic\n        select\n          timestamp_trunc(timestamp, hour) as timestamp,\n          \n          count(*) as count,\n          round(avg(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as avg_processing_time_ms,\n          round(min(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as min_processing_time_ms,\n          round(max(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as max_processing_time_ms\n        from auth_logs\n        where json_value(event_message, "$.auth_event.action") = \'login\'\n        \n        group by timestamp\n        order by timestamp desc\n      ',
  },
  {
    id: 'reports/auth/SignInProcessingTimePercentiles',
    sql: '\n        --signin-processing-time-percentiles\n        select\n          timestamp_trunc(timestamp, hour) as timestamp,\n          \n          count(*) as count,\n          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(50)] / 1000000, 2) as p50_processing_time_ms,\n          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(95)] / 1000000, 2) as p95_processing_time_ms,\n          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(99)] / 1000000, 2) as p99_processing_time_ms\n        from auth_logs\n        where json_value(event_message, "$.auth_event.action") = \'login\'\n        \n        group by timestamp\n        order by timestamp desc\n      ',
  },
  {
    id: 'reports/auth/SignUpProcessingTimeBasic',
    sql: '\n        --signup-processing-time-basic\n        select\n          timestamp_trunc(timestamp, hour) as timestamp,\n          \n          count(*) as count,\n          round(avg(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as avg_processing_time_ms,\n          round(min(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as min_processing_time_ms,\n          round(max(cast(json_value(event_message, "$.duration") as int64)) / 1000000, 2) as max_processing_time_ms\n        from auth_logs\n        where json_value(event_message, "$.auth_event.action") = \'user_signedup\'\n        \n        group by timestamp\n        order by timestamp desc\n      ',
  },
  {
    id: 'reports/auth/SignUpProcessingTimePercentiles',
    sql: '\n        --signup-processing-time-percentiles\n        select\n          timestamp_trunc(timestamp, hour) as timestamp,\n          \n          count(*) as count,\n          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(50)] / 1000000, 2) as p50_processing_time_ms,\n          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(95)] / 1000000, 2) as p95_processing_time_ms,\n          round(approx_quantiles(cast(json_value(event_message, "$.duration") as int64), 100)[offset(99)] / 1000000, 2) as p99_processing_time_ms\n        from auth_logs\n        where json_value(event_message, "$.auth_event.action") = \'user_signedup\'\n        \n        group by timestamp\n        order by timestamp desc\n      ',
  },
  {
    id: 'reports/auth/ErrorsByStatus',
    sql: "\n        --auth-errors-by-status\n  select\n    timestamp_trunc(timestamp, hour) as timestamp,\n    count(*) as count,\n    response.status_code\n  from edge_logs\n    cross join unnest(metadata) as m\n    cross join unnest(m.request) as request\n    cross join unnest(m.response) as response\n    cross join unnest(response.headers) as h\n  where path like '%auth/v1%'\n    and response.status_code >= 400 and response.status_code <= 599\n    \n  group by timestamp, status_code\n  order by timestamp desc\n      ",
  },
  {
    id: 'reports/auth/ErrorsByAuthCode',
    sql: "\n        --auth-errors-by-code\n  select\n    timestamp_trunc(timestamp, hour) as timestamp,\n    count(*) as count,\n    h.x_sb_error_code as error_code\n  from edge_logs\n    cross join unnest(metadata) as m\n    cross join unnest(m.request) as request\n    cross join unnest(m.response) as response\n    cross join unnest(response.headers) as h\n  where path like '%auth/v1%'\n    and response.status_code >= 400 and response.status_code <= 599\n    \n  group by timestamp, error_code\n  order by timestamp desc\n      ",
  },
];
