import { Router } from 'express';
import type pg from 'pg';
import type { Registry } from 'prom-client';

export interface HealthDeps {
  pool: Pick<pg.Pool, 'query'>;
  cacheReady: () => Promise<boolean | 'none'>;
  registry: Pick<Registry, 'contentType' | 'metrics'>;
  embedded: boolean;
  /** Read replicas as last checked (src/db/replicas.ts); undefined without DATABASE_READ_URLS. */
  replicas?: () => Array<{ name: string; healthy: boolean; lagMs: number | null }>;
}

/** `/health` (process alive), `/ready` (database reachable; says whether the cache is), `/metrics`. No key needed. */
export function healthRoutes({ pool, cacheReady, registry, embedded, replicas }: HealthDeps): Router {
  const router = Router();
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/ready', async (_req, res) => {
    const [database, cache] = await Promise.all([
      pool.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      cacheReady().catch(() => false),
    ]);
    // Replicas do not decide readiness: without them queries run on the primary.
    const body = { status: database ? 'ready' : 'unavailable', database, cache, embedded, ...(replicas ? { replicas: replicas() } : {}) };
    res.status(database ? 200 : 503).json(body);
  });
  router.get('/metrics', async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  });
  return router;
}
