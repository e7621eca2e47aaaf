/**
 * `GET/POST /api/endpoints`, `GET/PUT/PATCH/DELETE /api/endpoints/:idOrName` (admin scope).
 * Bodies are bare JSON: a list is an array, one endpoint an object (docs/API.md, "Management API").
 * Running an endpoint (`/api/endpoints/query/...`, `/:idOrName/sql`) lives in another router;
 * these routes match one path segment only, so they never shadow those.
 */
import { Router } from 'express';
import type { AppContext } from '../context.js';
import { jsonBody } from '../http/body.js';
import { EndpointManagementService } from './managementService.js';

/** `onChange` runs after every create, update or delete, so this replica's query path sees it at once. */
export function endpointManagementRoutes(ctx: AppContext, onChange: () => void): Router {
  const router = Router();
  const endpoints = new EndpointManagementService(ctx.db.knex, ctx.sources.lookup);
  const admin = ctx.auth.require('admin');

  router.get('/api/endpoints', admin, async (_req, res) => {
    res.json(await endpoints.list());
  });
  router.post('/api/endpoints', admin, jsonBody, async (req, res) => {
    const created = await endpoints.create(req.body);
    onChange();
    res.status(201).json(created);
  });
  router.get('/api/endpoints/:idOrName', admin, async (req, res) => {
    res.json(await endpoints.get(String(req.params.idOrName)));
  });
  router.put('/api/endpoints/:idOrName', admin, jsonBody, async (req, res) => {
    const replaced = await endpoints.replace(String(req.params.idOrName), req.body);
    onChange();
    res.json(replaced);
  });
  router.patch('/api/endpoints/:idOrName', admin, jsonBody, async (req, res) => {
    const patched = await endpoints.patch(String(req.params.idOrName), req.body);
    onChange();
    res.json(patched);
  });
  router.delete('/api/endpoints/:idOrName', admin, async (req, res) => {
    await endpoints.delete(String(req.params.idOrName));
    onChange();
    res.status(204).end();
  });
  return router;
}
