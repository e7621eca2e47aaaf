/**
 * `GET /api/sources/:idOrName/events?lql=&start=&end=&limit=&cursor=` (admin scope, like the
 * source pages): the console's search (docs/API.md, "Searching a source"; src/lql/search.ts);
 * `GET /api/sources/:idOrName/tail?lql=`: its live tail (src/lql/tail.ts).
 */
import { Router } from 'express';
import type { Authenticator } from '../auth/authenticate.js';
import type { EventSearch, SearchRequest } from './search.js';
import type { Metrics } from '../metrics.js';
import type { Arrivals } from './arrivals.js';
import { streamTail, type TailQuery } from './tail.js';

const PARAMS = ['lql', 'start', 'end', 'limit', 'cursor'] as const;

export function searchRoutes(
  auth: Pick<Authenticator, 'require'>,
  search: EventSearch,
  arrivals: Arrivals,
  metrics: Pick<Metrics, 'tailQueries'>,
): Router {
  const router = Router();
  router.get('/api/sources/:idOrName/events', auth.require('admin'), async (req, res) => {
    const request: SearchRequest = {};
    for (const name of PARAMS) {
      const value = req.query[name];
      if (typeof value === 'string') request[name] = value;
    }
    res.json(await search.search(String(req.params.idOrName), request));
  });
  // Live tail as server-sent events (tail.ts; docs/API.md, "Live tail").
  router.get('/api/sources/:idOrName/tail', auth.require('admin'), async (req, res) => {
    const lql = typeof req.query.lql === 'string' ? req.query.lql : '';
    const { source, rules, query } = await search.prepareTail(String(req.params.idOrName), lql);
    // Each query over arrivals is timed and counted (logquery_tail_query_duration_seconds; bench/tail.ts reads it).
    const timed: TailQuery = async (...args) => {
      const done = metrics.tailQueries.startTimer();
      try {
        return await query(...args);
      } finally {
        done();
      }
    };
    await streamTail(res, arrivals, source, rules, timed);
  });
  return router;
}
