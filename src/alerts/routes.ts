/**
 * `/api/alerts` (admin scope; docs/ALERTS.md): the original's alert routes, by id (its `token`)
 * or name, and ours: the run history, a run now, and a preview of the rows a query would send.
 * As the original: PUT answers the alert, PATCH 204; both change only the fields sent.
 */
import { Router } from 'express';
import type { Authenticator } from '../auth/authenticate.js';
import { jsonBody } from '../http/body.js';
import type { AlertService } from './service.js';

export function alertRoutes({ auth, alerts }: { auth: Pick<Authenticator, 'require'>; alerts: AlertService }): Router {
  const router = Router();
  const admin = auth.require('admin');

  router.get('/api/alerts', admin, async (_req, res) => {
    res.json(await alerts.list());
  });
  router.post('/api/alerts', admin, jsonBody, async (req, res) => {
    res.status(201).json(await alerts.create(req.body));
  });
  // Before `/:idOrName` routes of the same method: "preview" is not an alert's name here.
  router.post('/api/alerts/preview', admin, jsonBody, async (req, res) => {
    res.json(await alerts.preview(req.body));
  });
  router.get('/api/alerts/:idOrName', admin, async (req, res) => {
    res.json(await alerts.get(String(req.params.idOrName)));
  });
  router.put('/api/alerts/:idOrName', admin, jsonBody, async (req, res) => {
    res.json(await alerts.update(String(req.params.idOrName), req.body));
  });
  router.patch('/api/alerts/:idOrName', admin, jsonBody, async (req, res) => {
    await alerts.update(String(req.params.idOrName), req.body);
    res.status(204).end();
  });
  router.delete('/api/alerts/:idOrName', admin, async (req, res) => {
    await alerts.delete(String(req.params.idOrName));
    res.status(204).end();
  });
  router.get('/api/alerts/:idOrName/runs', admin, async (req, res) => {
    res.json(await alerts.history(String(req.params.idOrName)));
  });
  router.post('/api/alerts/:idOrName/run', admin, async (req, res) => {
    res.json(await alerts.runNow(String(req.params.idOrName)));
  });
  return router;
}
