/**
 * The request pipeline: the cross-cutting steps every request goes through before it is routed
 * (request id, metrics and the request log, and whatever is added to the list in app.ts, such
 * as a rate limit), defined once and run once per request by the service's one front door
 * (frontDoor, src/http/server.ts), before the GET fast path of cache hits and before Express.
 *
 * Steps see the raw node request and response only (`IncomingMessage`, `ServerResponse`): the
 * fast path never builds an Express request, so a step that needed one would skip cache hits.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';

/** One request on its way through the pipeline. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** `performance.now()` when the pipeline took the request (a double: no BigInt per request). */
  readonly started: number;
  /** The request id (set by the request-id step; echoed in `X-Request-Id`, written in log lines). */
  id: string;
  /**
   * The route label for metrics and logs when the request is answered outside Express's router
   * (the fast path sets it); otherwise the route Express matched is used.
   */
  route: string | undefined;
  /** An error handed to the app for its error middleware to answer (see handOver). */
  pending: { err: unknown } | undefined;
}

export interface PipelineStep {
  /** For logs and tests. */
  readonly name: string;
  /**
   * Runs once per request, before routing. To refuse the request, throw (or reject with) an
   * AppError: the app's error middleware answers it with the envelope, and no later step runs.
   * A returned promise holds the request until it settles; a step that can decide synchronously
   * should, as cache hits are answered in tens of microseconds (BENCHMARKS.md, "cache hit").
   */
  run(exchange: Exchange): void | Promise<void>;
}

const EXCHANGE = Symbol('exchange');
type Carrier = IncomingMessage & { [EXCHANGE]?: Exchange };

/** The exchange of a request that went through the pipeline; undefined before it did. */
export function exchangeOf(req: IncomingMessage): Exchange | undefined {
  return (req as Carrier)[EXCHANGE];
}

/** Called when the steps are done: with `failure` when one refused the request or failed. */
export type AfterSteps = (failure?: { err: unknown }) => void;

export class RequestPipeline {
  constructor(readonly steps: readonly PipelineStep[]) {}

  /** Runs the steps for `req` unless it already went through them, then `after`. */
  run(req: IncomingMessage, res: ServerResponse, after: AfterSteps): void {
    const carrier = req as Carrier;
    if (carrier[EXCHANGE] !== undefined) return after();
    const exchange: Exchange = { req, res, started: performance.now(), id: '', route: undefined, pending: undefined };
    carrier[EXCHANGE] = exchange;
    this.runFrom(0, exchange, after);
  }

  private runFrom(first: number, exchange: Exchange, after: AfterSteps): void {
    const steps = this.steps;
    for (let i = first; i < steps.length; i++) {
      let out: void | Promise<void>;
      try {
        out = steps[i].run(exchange);
      } catch (err) {
        return after({ err });
      }
      if (out !== undefined) {
        out.then(
          () => this.runFrom(i + 1, exchange, after),
          (err: unknown) => after({ err }),
        );
        return;
      }
    }
    after();
  }
}

/**
 * The Express app's first middleware: passes on an error handed over by the front door (a
 * refusing step, a failed fast-path fetch) to the error middleware, so it is answered with the
 * same envelope as everything else.
 */
export function handedOverErrors(req: Request, _res: Response, next: NextFunction): void {
  const exchange = exchangeOf(req);
  const pending = exchange?.pending;
  if (pending === undefined) return next();
  if (exchange) exchange.pending = undefined;
  next(pending.err);
}

/**
 * Gives a request that went through the pipeline to `app` with an error to answer: the app's
 * first middleware (handedOverErrors) passes it to the error middleware, so refusals
 * and failures outside Express get the same envelope as everything else.
 */
export function handOver(
  req: IncomingMessage,
  res: ServerResponse,
  err: unknown,
  app: (req: IncomingMessage, res: ServerResponse) => void,
): void {
  const exchange = exchangeOf(req);
  if (exchange !== undefined) exchange.pending = { err };
  app(req, res);
}
