/**
 * `POST /api/logs?source_name=<name>` (or `?source=<id>`): ingest scope (admin too).
 * Answers 200 `{"message": "Logged!", "count": N}` only after the batch is committed.
 */
import { Router } from 'express';
import type { AppContext } from '../context.js';
import { readIngestBody } from './parseBody.js';
import { IngestService } from './service.js';

export function ingestRoutes(ctx: AppContext): Router {
  const router = Router();
  const ingest = new IngestService(ctx);
  router.post('/api/logs', ctx.auth.require('ingest'), async (req, res) => {
    const source = await ingest.resolveSource(req.query);
    const parsed = await readIngestBody(req);
    const count = await ingest.ingest(source, parsed);
    res.json({ message: 'Logged!', count });
  });
  return router;
}
