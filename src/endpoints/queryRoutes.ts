import { Router, type Request, type Response } from 'express';
import { jsonBody } from '../ingest/parseBody.js';
import type { AppContext } from '../context.js';
import type { EndpointQueryService } from './queryService.js';
import { collectInput } from './params.js';

/** Header that turns redaction on for one call (CONTRACT.md §4). */
export const REDACT_HEADER = 'LF-ENDPOINT-REDACT-PII';

/** `GET|POST /api/endpoints/query/:idOrName` and `GET /api/endpoints/:idOrName/sql`. */
export function queryRoutes(ctx: AppContext, service: EndpointQueryService): Router {
  const router = Router();
  const requireQuery = ctx.auth.require('query');

  const run = async (req: Request, res: Response) => {
    const input = collectInput(req.query as Record<string, unknown>, req.method === 'POST' ? req.body : undefined);
    const result = await service.run(String(req.params.idOrName), { input, redact: wantsRedaction(req) });
    res.status(200).set('X-Cache', result.cache).type('application/json; charset=utf-8').send(result.body);
  };
  router.get('/api/endpoints/query/:idOrName', requireQuery, run);
  // jsonBody: a JSON body of at most 1 MB, and 415 for a body of another Content-Type
  // (text/plain, multipart, form): express.json() skipped those, so their parameters (and
  // `sql`) were silently ignored and the endpoint ran without them (test/hardening/bad-input.test.ts).
  router.post('/api/endpoints/query/:idOrName', requireQuery, jsonBody, run);

  router.get('/api/endpoints/:idOrName/sql', ctx.auth.require('admin'), async (req, res) => {
    const input = collectInput(req.query as Record<string, unknown>, undefined);
    const explain = input.explain === 'true';
    res.json(await service.plan(String(req.params.idOrName), { input, redact: wantsRedaction(req) }, explain));
  });
  return router;
}

function wantsRedaction(req: Request): boolean {
  return (req.get(REDACT_HEADER) ?? '').trim().toLowerCase() === 'true';
}
