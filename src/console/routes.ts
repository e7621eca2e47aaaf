/**
 * The browser console (console/, docs/CONSOLE.md), served from the assets `npm run build` writes
 * to dist/console, so it works offline. Hashed assets never change under their name and are cached
 * for a year; index.html is revalidated on every load so a new build is picked up at once. The
 * console's own routes (`/`, `/endpoints/...`, `/sources/...`) all answer index.html, which routes
 * in the browser; `/api/...` is never the console's, so an unknown API path keeps the JSON 404.
 * The page carries the console's Content-Security-Policy (src/http/securityHeaders.ts); source
 * maps are built (`hidden`, for whoever debugs on the server) but not served.
 */
import fs from 'node:fs';
import path from 'node:path';
import express, { Router } from 'express';
import { NotFoundError } from '../errors.js';
import { PROJECT_ROOT } from '../paths.js';
import { CONSOLE_CSP } from '../http/securityHeaders.js';

export const CONSOLE_DIR = path.join(PROJECT_ROOT, 'dist', 'console');
/** Paths the console routes in the browser (console/src/router.ts). */
const CONSOLE_PAGES = /^\/(?:(?:endpoints|sources|new-endpoint|alerts|new-alert)(?:\/[^/]*)*)?\/?$/;
const YEAR_SECONDS = 365 * 86_400;

export function consoleRoutes(dir = CONSOLE_DIR): Router {
  const router = Router();
  // Source maps would publish the console's sources as written: a 404 like any unknown asset.
  router.use('/assets', (req, _res, next) => next(req.path.endsWith('.map') ? 'router' : undefined));
  router.use(
    '/assets',
    express.static(path.join(dir, 'assets'), {
      immutable: true,
      maxAge: YEAR_SECONDS * 1000,
      index: false,
      fallthrough: true,
    }),
  );
  router.get(CONSOLE_PAGES, (_req, res) => {
    const index = path.join(dir, 'index.html');
    if (!fs.existsSync(index)) throw new NotFoundError('The console is not built: run `npm run build` (docs/CONSOLE.md).');
    res.set({ 'Cache-Control': 'no-cache', 'Content-Security-Policy': CONSOLE_CSP }).type('html').sendFile(index);
  });
  return router;
}
