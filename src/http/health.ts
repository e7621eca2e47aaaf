import { Router } from 'express';
import type { AppContext } from '../context.js';

/** `/health` (process alive), `/ready` (database reachable; says whether the cache is), `/metrics`. No key needed. */
export function healthRoutes(ctx: AppContext, cacheReady: () => Promise<boolean | 'none'>): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/ready', async (_req, res) => {
    const [database, cache] = await Promise.all([
      ctx.db.pool.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      cacheReady().catch(() => false),
    ]);
    // Replicas do not decide readiness: without them queries run on the primary.
    const replicas = ctx.config.databaseReadUrls.length ? { replicas: ctx.reads.status() } : {};
    const body = { status: database ? 'ready' : 'unavailable', database, cache, embedded: ctx.embedded, ...replicas };
    res.status(database ? 200 : 503).json(body);
  });
  router.get('/metrics', async (_req, res) => {
    res.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics());
  });
  return router;
}
