/**
 * `GET /api/sources/:idOrName/events?lql=&start=&end=&limit=&cursor=` (admin scope, like the
 * source pages): the console's search (docs/API.md, "Searching a source"; src/lql/search.ts).
 */
import { Router } from 'express';
import type { Authenticator } from '../auth/authenticate.js';
import type { EventSearch, SearchRequest } from './search.js';

const PARAMS = ['lql', 'start', 'end', 'limit', 'cursor'] as const;

export function searchRoutes(auth: Pick<Authenticator, 'require'>, search: EventSearch): Router {
  const router = Router();
  router.get('/api/sources/:idOrName/events', auth.require('admin'), async (req, res) => {
    const request: SearchRequest = {};
    for (const name of PARAMS) {
      const value = req.query[name];
      if (typeof value === 'string') request[name] = value;
    }
    res.json(await search.search(String(req.params.idOrName), request));
  });
  return router;
}
