/**
 * `GET/POST /api/endpoints`, `GET/PUT/PATCH/DELETE /api/endpoints/:idOrName` (admin scope).
 * Bodies are bare JSON: a list is an array, one endpoint an object (docs/API.md, "Management API"),
 * in both our field names and the original service's (docs/COMPATIBILITY.md, "Management API").
 * Running an endpoint (`/api/endpoints/query/...`, `/:idOrName/sql`) lives in another router;
 * these routes match one path segment only, so they never shadow those.
 */
import { Router } from 'express';
import type { Knex } from 'knex';
import type { Authenticator } from '../auth/authenticate.js';
import type { SourceLookup } from '../sources/schema.js';
import { jsonBody } from '../http/body.js';
import { EndpointManagementService } from './managementService.js';
import { presentEndpoint } from './present.js';

/** `onChange` runs after every create, update or delete, so this replica's query path sees it at once. */
export interface EndpointManagementDeps {
  auth: Pick<Authenticator, 'require'>;
  knex: Knex;
  sources: SourceLookup;
  /** Called after every change, so the query service of this replica sees it at once. */
  onChange: () => void;
}

export function endpointManagementRoutes({ auth, knex, sources, onChange }: EndpointManagementDeps): Router {
  const router = Router();
  const endpoints = new EndpointManagementService(knex, sources);
  const admin = auth.require('admin');

  router.get('/api/endpoints', admin, async (_req, res) => {
    res.json((await endpoints.list()).map(presentEndpoint));
  });
  router.post('/api/endpoints', admin, jsonBody, async (req, res) => {
    const created = await endpoints.create(req.body);
    onChange();
    res.status(201).json(presentEndpoint(created));
  });
  router.get('/api/endpoints/:idOrName', admin, async (req, res) => {
    res.json(presentEndpoint(await endpoints.get(String(req.params.idOrName))));
  });
  router.put('/api/endpoints/:idOrName', admin, jsonBody, async (req, res) => {
    const replaced = await endpoints.replace(String(req.params.idOrName), req.body);
    onChange();
    res.json(presentEndpoint(replaced));
  });
  router.patch('/api/endpoints/:idOrName', admin, jsonBody, async (req, res) => {
    await endpoints.patch(String(req.params.idOrName), req.body);
    onChange();
    // As the original service answers a PATCH: 204 and no body (PUT answers the endpoint).
    res.status(204).end();
  });
  router.delete('/api/endpoints/:idOrName', admin, async (req, res) => {
    await endpoints.delete(String(req.params.idOrName));
    onChange();
    res.status(204).end();
  });
  return router;
}
