import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { MAX_HEADER_BYTES } from '../inputLimits.js';
import { handOver, type RequestPipeline } from './pipeline.js';

/** A node request listener: what `http.createServer` takes, and what `createApp` returns. */
export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Answers a request before the app (true), or leaves it to the app (false); when it took the
 * request but cannot finish it, it hands it back with the error (handOver).
 */
export type BeforeApp = (req: IncomingMessage, res: ServerResponse, app: Listener) => boolean;

/**
 * The service's one front door: every request runs the pipeline's steps, is then offered to
 * `beforeApp` (perf: the query fast path answers cache hits without Express, app.ts), and
 * otherwise goes to `app` (Express). A step's refusal is handed to `app` for its error answer.
 * The server and the tests take the same listener, so there is one way in.
 */
export function frontDoor(pipeline: RequestPipeline, beforeApp: BeforeApp, app: Listener): Listener {
  return (req, res) =>
    pipeline.run(req, res, (failure) => {
      if (failure) handOver(req, res, failure.err, app);
      else if (!beforeApp(req, res, app)) app(req, res);
    });
}

/**
 * security: Node's defaults suit a server of pages, not an API: a head may take 60 s and a body
 * 300 s, so a client dripping an ingest body held its connection past 130 s (issue 25, finding
 * 11). An API request arrives within seconds; a 10 MB ingest body within a minute at 1.5 Mbit/s.
 */
export interface ServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

const DEFAULT_TIMEOUTS: ServerTimeouts = { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000 };

export function createHttpServer(listener: Listener, timeouts: ServerTimeouts = DEFAULT_TIMEOUTS): http.Server {
  return http.createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: timeouts.headersTimeoutMs,
      // Node checks both every 30 s (connectionsCheckingInterval), so a connection may outlive them by that much.
      requestTimeout: Math.max(timeouts.requestTimeoutMs, timeouts.headersTimeoutMs),
    },
    listener,
  );
}
