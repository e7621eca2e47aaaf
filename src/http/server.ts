import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Express } from 'express';
import { MAX_HEADER_BYTES } from '../limits.js';

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
