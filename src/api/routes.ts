/**
 * `GET /api/openapi.json`. Without a key: the shape of the API, the same for every deployment.
 * With a key that may run endpoints: also one path per endpoint of this deployment, since their
 * names, descriptions and parameters are the deployment's own (docs/API.md, "OpenAPI").
 */
import { Router, type NextFunction, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import { requestKey, type Authenticator } from '../auth/authenticate.js';
import { EndpointRepository } from '../endpoints/repository.js';
import { openApiDocument } from './openapi.js';

export interface OpenApiRoutesDeps {
  auth: Pick<Authenticator, 'require'>;
  knex: Knex;
}

export function openApiRoutes({ auth, knex }: OpenApiRoutesDeps): Router {
  const router = Router();
  const requireQuery = auth.require('query');
  const endpoints = new EndpointRepository(knex);
  const keyIfSent = (req: Request, res: Response, next: NextFunction) => (requestKey(req) ? requireQuery(req, res, next) : next());

  router.get('/api/openapi.json', keyIfSent, async (req, res) => {
    const document = openApiDocument(req.apiKey ? await endpoints.list() : []);
    res.set('Cache-Control', 'no-cache').json(document);
  });
  return router;
}
