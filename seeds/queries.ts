import { DEFAULT_SOURCES } from '../src/sources/defaults.js';

/**
 * The SQL of the two seeded endpoints (docs/API.md, "Seeded endpoints"), written the way
 * clients of the original BigQuery-backed service write it: backticked source names, UNNEST
 * joins, a trailing comma before FROM, GROUP BY a select alias. The translator must take them
 * unchanged.
 */

export const USAGE_API_COUNTS_SQL = `-- requests per bucket, split by API area
with
  dates as (
    select
      (
        case
          when @interval = 'hourly' then timestamp_sub(current_timestamp(), interval 1 hour)
          when @interval = 'daily' then timestamp_sub(current_timestamp(), interval 7 day)
          when @interval = 'minutely' then timestamp_sub(current_timestamp(), interval 60 minute)
          when @interval = '1hr' then timestamp_sub(current_timestamp(), interval 60 minute)
          when @interval = '1day' then timestamp_sub(current_timestamp(), interval 24 hour)
          when @interval = '7day' then timestamp_sub(current_timestamp(), interval 7 day)
        end
      ) as start
  ),
  chart_counts as (
    select
      (
        case
          when @interval = 'hourly' then timestamp_trunc(f0.timestamp, hour)
          when @interval = 'daily' then timestamp_trunc(f0.timestamp, day)
          when @interval = 'minutely' then timestamp_trunc(f0.timestamp, minute)
          when @interval = '1hr' then timestamp_trunc(f0.timestamp, minute)
          when @interval = '1day' then timestamp_trunc(f0.timestamp, hour)
          when @interval = '7day' then timestamp_trunc(f0.timestamp, day)
        end
      ) as timestamp,
      countif(regexp_contains(f2.path, '/rest')) as total_rest_requests,
      countif(regexp_contains(f2.path, '/storage')) as total_storage_requests,
      countif(regexp_contains(f2.path, '/auth')) as total_auth_requests,
      countif(regexp_contains(f2.path, '/realtime')) as total_realtime_requests,
    from
      \`cloudflare.logs.prod\` as f0
      left join unnest(f0.metadata) as f1 on true
      left join unnest(f1.request) as f2 on true
    where
      regexp_contains(f2.url, @project)
      and f0.timestamp >= (select start from dates)
    group by
      timestamp
  )
select
  datetime(chart_counts.timestamp, 'UTC') as timestamp,
  coalesce(sum(total_rest_requests), 0) as total_rest_requests,
  coalesce(sum(total_storage_requests), 0) as total_storage_requests,
  coalesce(sum(total_auth_requests), 0) as total_auth_requests,
  coalesce(sum(total_realtime_requests), 0) as total_realtime_requests
from
  chart_counts
group by
  timestamp
order by
  timestamp asc
`;

/** One window filter per CTE: the bounds are optional, so an empty or missing value means "no bound". */
const timeWindow = (alias: string): string => `
      and (
        case
          when coalesce(@iso_timestamp_start, '') = '' then true
          else ${alias}.timestamp > cast(@iso_timestamp_start as timestamp)
        end
      )
      and (
        case
          when coalesce(@iso_timestamp_end, '') = '' then true
          else ${alias}.timestamp <= cast(@iso_timestamp_end as timestamp)
        end
      )`;

const topLevelProject = (cte: string, source: string): string => `
  ${cte} as (
    select t.id, t.timestamp, t.event_message, t.metadata
    from \`${source}\` as t
    where
      t.project = @project${timeWindow('t')}
    order by t.timestamp desc
  )`;

const metadataProject = (cte: string, source: string, field: string): string => `
  ${cte} as (
    select t.id, t.timestamp, t.event_message, t.metadata
    from \`${source}\` as t
      cross join unnest(t.metadata) as m
    where
      m.${field} = @project${timeWindow('t')}
    order by t.timestamp desc
  )`;

/** One CTE per default source, filtered by its project field and the optional window. */
const sourceCte = ({ cte, name, project }: (typeof DEFAULT_SOURCES)[number]): string =>
  project === 'project' ? topLevelProject(cte, name) : metadataProject(cte, name, project.slice('metadata.'.length));

export const LOGS_ALL_SQL = `-- log entries of one project within an optional window
with${DEFAULT_SOURCES.map(sourceCte).join(',')}
select id, timestamp, event_message, metadata
from edge_logs
order by timestamp desc
limit 100
`;
