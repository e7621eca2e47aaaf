/**
 * `POST /api/logs?source_name=<name>` (or `?source=<id>`): ingest scope (admin too).
 * Answers 200 `{"message": "Logged!", "count": N}` only after the batch is committed.
 *
 * Decisions where CONTRACT.md leaves a choice:
 * - Content-Type other than JSON (`application/json`, `*+json`, none) or NDJSON
 *   (`application/x-ndjson`, `application/ndjson`, `application/jsonl`, `application/x-jsonlines`)
 *   answers 415 with the error envelope; an unknown Content-Encoding too.
 * - An event holding the NUL character or an unpaired surrogate (which Postgres `text`/`jsonb`
 *   cannot store), or nested more than 100 levels, is an invalid event: the batch answers 400
 *   naming it, nothing is stripped. Keys are never a problem: they are stored through `fieldName`.
 * - An empty batch (`[]`, `{"batch": []}`, NDJSON of blank lines) answers 200 with count 0;
 *   an empty body answers 400.
 * - At most 100 per-event errors are listed; the message gives the total.
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
