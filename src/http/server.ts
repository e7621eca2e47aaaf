import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Express } from 'express';

/**
 * Node refuses request heads over 16 KB with a bare 431, but the API allows a sandboxed `sql`
 * of up to 100 KB (docs/API.md, "Limits") in the query string of a GET (up to three times that
 * once URL-encoded).
 * The head limit is raised to fit it; bodies keep their own limits (1 MB, 10 MB for ingest).
 */
export const MAX_HEADER_BYTES = 512 * 1024;

/** Answers a request before the app (true), or leaves it to the app (false); `app` takes back one it cannot finish. */
export type BeforeApp = (req: IncomingMessage, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => void) => boolean;

const beforeApp = new WeakMap<Express, BeforeApp>();

/** perf: the server of `app` offers every request to `serve` before Express dispatch (the query fast path, app.ts). */
export function serveBeforeApp(app: Express, serve: BeforeApp): void {
  beforeApp.set(app, serve);
}

export function createHttpServer(app: Express): http.Server {
  const serve = beforeApp.get(app);
  const listener =
    serve === undefined
      ? app
      : (req: IncomingMessage, res: ServerResponse) => {
          if (!serve(req, res, app)) app(req, res);
        };
  return http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, listener);
}
