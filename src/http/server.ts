import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Express } from 'express';
import { MAX_HEADER_BYTES } from '../inputLimits.js';
import { handOver, type RequestPipeline } from './pipeline.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Answers a request before the app (true), or leaves it to the app (false); when it took the
 * request but cannot finish it, it hands it back with the error (handOver).
 */
export type BeforeApp = (req: IncomingMessage, res: ServerResponse, app: Listener) => boolean;

/** What the server runs in front of the app's router: the pipeline's steps, then the fast path. */
export interface FrontDoor {
  pipeline: RequestPipeline;
  /** perf: the query fast path (app.ts), offered every request after the steps and before Express dispatch. */
  beforeApp?: BeforeApp;
}

const frontDoors = new WeakMap<Express, FrontDoor>();

/** The server of `app` runs `door` for every request before Express (app.ts registers it). */
export function setFrontDoor(app: Express, door: FrontDoor): void {
  frontDoors.set(app, door);
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

export function createHttpServer(app: Express, timeouts: ServerTimeouts = DEFAULT_TIMEOUTS): http.Server {
  const door = frontDoors.get(app);
  let listener: Listener = app;
  if (door !== undefined) {
    const { pipeline, beforeApp } = door;
    listener = (req, res) =>
      pipeline.run(req, res, (failure) => {
        if (failure) handOver(req, res, failure.err, app);
        else if (beforeApp === undefined || !beforeApp(req, res, app)) app(req, res);
      });
  }
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
