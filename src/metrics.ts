import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** All Prometheus metrics of one service instance, on its own registry (tests run several). */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'logquery_http_requests_total',
      help: 'HTTP requests',
      labelNames: ['route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'logquery_http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['route'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15],
      registers: [registry],
    }),
    queryRuns: new Counter({
      name: 'logquery_endpoint_queries_total',
      help: 'Endpoint queries run on the database',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    cacheEvents: new Counter({
      name: 'logquery_cache_events_total',
      help: 'Result cache events: hit, miss, bypass, warm_run, warm_failure, singleflight_wait, error',
      labelNames: ['event'],
      registers: [registry],
    }),
    ingestedEvents: new Counter({
      name: 'logquery_ingested_events_total',
      help: 'Events committed',
      labelNames: ['source'],
      registers: [registry],
    }),
    droppedEvents: new Counter({
      name: 'logquery_ingest_dropped_events_total',
      help: 'Valid events not stored: reason stale (older than the source retention) or future (more than 1 h ahead)',
      labelNames: ['source', 'reason'],
      registers: [registry],
    }),
    tailQueries: new Histogram({
      name: 'logquery_tail_query_duration_seconds',
      help: 'Queries run for live tail viewers over what arrived (at most one a second per viewer, none while nothing arrives)',
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    hourlyEvents: new Counter({
      name: 'logquery_hourly_events_total',
      help: 'The hourly split (docs/ARCHITECTURE.md, "Hourly partials"): split (a load answered from kept hours), cold (a load run whole: most closed hours missing, handed to the background), hours_computed (hours the background kept), fills_dropped (hours not queued: the background queue was full), shapes_skipped (shapes past the cap of a tick), background_failed',
      labelNames: ['event'],
      registers: [registry],
    }),
    rejectedEvents: new Counter({
      name: 'logquery_ingest_rejected_events_total',
      help: 'Invalid events reported to the sender and not stored',
      labelNames: ['source'],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The fair scheduler's load in this process (src/rateLimit/scheduler.ts), read at each scrape. */
export function registerSchedulerGauges(registry: Registry, load: () => { waiting: number; busy: number }): void {
  new Gauge({
    name: 'logquery_queries_waiting',
    help: 'Uncached queries of this process waiting for a database slot',
    registers: [registry],
    collect() {
      this.set(load().waiting);
    },
  });
  new Gauge({
    name: 'logquery_query_slots_busy',
    help: 'Database slots held by queries of this process (QUERY_SLOTS in all)',
    registers: [registry],
    collect() {
      this.set(load().busy);
    },
  });
}
