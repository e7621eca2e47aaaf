/**
 * The Express application: routes, body limits, the error envelope. No I/O happens here at
 * import time; everything comes from the AppContext.
 */
import { performance } from 'node:perf_hooks';
import express, { type Express } from 'express';
import type { AppContext } from './context.js';
import { errorMiddleware, notFoundHandler } from './http/errorMiddleware.js';
import { healthRoutes } from './http/health.js';
import { serveBeforeApp } from './http/server.js';
import { ingestRoutes } from './ingest/routes.js';
import { endpointManagementRoutes } from './endpoints/managementRoutes.js';
import { sourceRoutes } from './sources/routes.js';
import { keyRoutes } from './auth/routes.js';
import { openApiRoutes } from './api/routes.js';
import { consoleRoutes } from './console/routes.js';
import { EndpointQueryService } from './endpoints/queryService.js';
import { fastQueryRoute, queryRoutes } from './endpoints/queryRoutes.js';

export async function createApp(ctx: AppContext): Promise<Express> {
  const queries = new EndpointQueryService(ctx);
  await queries.init();

  const app = express();
  app.disable('x-powered-by');
  // Both also hold for the GET fast path (fastQueryRoute), which parses with querystring.parse and
  // sends no ETag: change them together.
  app.set('query parser', 'simple'); // flat string values only: `a[b]=c` is not turned into objects
  app.set('etag', false);

  // perf: cache hits of `GET /api/endpoints/query/:idOrName` before Express dispatch (served by
  // createHttpServer) or else before any other middleware; whatever it cannot answer from memory
  // and the cache goes on to the ordinary route (see fastQueryRoute).
  const fastQuery = fastQueryRoute(ctx, queries);
  serveBeforeApp(app, fastQuery.serve);
  app.use(fastQuery.middleware);

  app.use((req, res, next) => {
    const started = performance.now(); // a double: no BigInt per request
    res.on('finish', () => {
      const route = (req.route?.path as string | undefined) ?? 'unmatched';
      ctx.metrics.httpRequests.inc({ route, status: String(res.statusCode) });
      ctx.metrics.httpDuration.observe({ route }, (performance.now() - started) / 1000);
      // req.path, never req.url: the query string may hold the api_key (src/auth/urlKey.ts).
      ctx.logger.debug({ method: req.method, path: req.path, route, status: res.statusCode }, 'request');
    });
    next();
  });

  app.use(healthRoutes(ctx, () => ctx.cache.ready()));
  // Routers of each feature (one line each):
  app.use(queryRoutes(ctx, queries));
  app.use(ingestRoutes(ctx));
  app.use(endpointManagementRoutes(ctx, () => queries.forgetEndpoints()));
  app.use(sourceRoutes(ctx));
  app.use(keyRoutes(ctx));
  app.use(openApiRoutes(ctx));
  app.use(consoleRoutes());

  app.use(notFoundHandler);
  app.use(errorMiddleware(ctx.logger, ctx.config.queryTimeoutMs));
  return app;
}
