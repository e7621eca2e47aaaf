/**
 * The Express application: routes, body limits, the error envelope. No I/O happens here at
 * import time; everything comes from the AppContext.
 */
import express from 'express';
import type { AppContext } from './context.js';
import { errorMiddleware, notFoundHandler } from './http/errorMiddleware.js';
import { healthRoutes } from './http/health.js';
import { frontDoor, type Listener } from './http/server.js';
import { handedOverErrors, RequestPipeline, type PipelineStep } from './http/pipeline.js';
import { requestIdStep, requestMetricsStep } from './http/steps.js';
import { securityHeadersStep } from './http/securityHeaders.js';
import { rateLimitStep } from './rateLimit/step.js';
import { ingestRoutes } from './ingest/routes.js';
import { IngestService } from './ingest/service.js';
import { endpointManagementRoutes } from './endpoints/managementRoutes.js';
import { sourceRoutes } from './sources/routes.js';
import { EventSearch } from './lql/search.js';
import { searchRoutes } from './lql/routes.js';
import { keyRoutes } from './auth/routes.js';
import { accessTokenRoutes } from './auth/accessTokens.js';
import { openApiRoutes } from './api/routes.js';
import { consoleRoutes } from './console/routes.js';
import { alertRoutes } from './alerts/routes.js';
import { ReportWarmup } from './query/reportWarmup.js';
import { EndpointQueryService } from './endpoints/queryService.js';
import { fastQueryRoute, queryRoutes } from './endpoints/queryRoutes.js';
import { endpointAccess } from './endpoints/access.js';

export interface AppOptions {
  /** Steps run after the built-in ones of the request pipeline, before routing (src/http/pipeline.ts). */
  steps?: readonly PipelineStep[];
}

/**
 * The service as one node listener (its front door, src/http/server.ts): the pipeline's steps,
 * then the query fast path, then Express. `createHttpServer` serves it; tests give it to
 * supertest or `http.createServer` and get the same way in.
 */
export async function createApp(ctx: AppContext, options: AppOptions = {}): Promise<Listener> {
  const { auth, cache, metrics, logger } = ctx;
  const queries = new EndpointQueryService({
    knex: ctx.db.knex,
    reads: ctx.reads,
    limiter: ctx.limiter,
    sources: ctx.sources,
    cache,
    metrics,
    logger,
    queryTimeoutMs: ctx.config.queryTimeoutMs,
    pipelined: ctx.db.capabilities.pipelinedBatch,
    hourly: ctx.hourlyBackground,
  });
  await queries.init();
  // Studio's reports kept warm: the warm-up translates as this app's endpoint service does (src/query/reportWarmup.ts).
  if (ctx.hourlyBackground && ctx.config.hourlyWarmReports)
    ctx.hourlyBackground.warmWith(
      new ReportWarmup({ splitShape: (e, input) => queries.splitShape(e, input), sources: ctx.sources, db: ctx.db.pool }),
    );

  const app = express();
  app.disable('x-powered-by');
  // Both also hold for the GET fast path (fastQueryRoute), which parses with querystring.parse and
  // sends no ETag: change them together.
  app.set('query parser', 'simple'); // flat string values only: `a[b]=c` is not turned into objects
  app.set('etag', false);

  // Every request goes through the pipeline's steps once, in this order, before the fast path and
  // before it is routed. A step for all requests belongs in this list, not in app.use, or cache
  // hits would skip it.
  const pipeline = new RequestPipeline([
    securityHeadersStep(),
    requestIdStep(),
    requestMetricsStep(metrics, logger),
    rateLimitStep(auth, ctx.limiter),
    ...(options.steps ?? []),
  ]);
  // perf: cache hits of `GET /api/endpoints/query/:idOrName` before Express dispatch; whatever it
  // cannot answer from memory and the cache goes on to the ordinary route (see fastQueryRoute).
  const fastQuery = fastQueryRoute(auth, cache, queries);
  app.use(handedOverErrors);

  app.use(
    healthRoutes({
      pool: ctx.db.pool,
      cacheReady: () => cache.ready(),
      registry: metrics.registry,
      embedded: ctx.embedded,
      replicas: ctx.config.databaseReadUrls.length ? () => ctx.reads.status() : undefined,
    }),
  );
  // Routers of each feature, each given only what it uses:
  app.use(queryRoutes(auth, queries, endpointAccess(ctx.limiter)));
  // Live tail learns of new events from the writer (src/lql/arrivals.ts).
  app.use(ingestRoutes(auth, new IngestService({ sources: ctx.sources, writer: ctx.arrivals.watch(ctx.writer), metrics })));
  app.use(endpointManagementRoutes({ auth, knex: ctx.db.knex, sources: ctx.sources.lookup, onChange: () => queries.forgetEndpoints() }));
  app.use(sourceRoutes({ auth, sources: ctx.sources, writer: ctx.writer, retentionDays: ctx.config.retentionDays }));
  const search = new EventSearch({
    sources: ctx.sources,
    reads: ctx.reads,
    queryTimeoutMs: ctx.config.queryTimeoutMs,
    pipelined: ctx.db.capabilities.pipelinedBatch,
  });
  app.use(searchRoutes(auth, search, ctx.arrivals, metrics));
  app.use(keyRoutes({ auth, keys: ctx.keys }));
  app.use(accessTokenRoutes({ auth, keys: ctx.keys }));
  app.use(alertRoutes({ auth, alerts: ctx.alerts }));
  app.use(openApiRoutes({ auth, knex: ctx.db.knex }));
  app.use(consoleRoutes());

  app.use(notFoundHandler);
  app.use(errorMiddleware(logger, ctx.config.queryTimeoutMs));
  return frontDoor(pipeline, fastQuery.serve, app);
}
