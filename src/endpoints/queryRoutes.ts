import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { jsonBody } from '../http/body.js';
import type { AppContext } from '../context.js';
import { keyOfHeaders } from '../auth/authenticate.js';
import { splitUrlKey, withoutUrlKey } from '../auth/urlKey.js';
import type { ApiKeyRecord } from '../auth/keys.js';
import type { CacheOutcome } from '../cache/types.js';
import type { EndpointQueryService, PreparedRun } from './queryService.js';
import { collectInput } from './params.js';

/** Header that turns redaction on for one call (docs/API.md, "PII redaction"). */
export const REDACT_HEADER = 'LF-ENDPOINT-REDACT-PII';

/** The route's path, also its label in the HTTP metrics. */
export const QUERY_ROUTE = '/api/endpoints/query/:idOrName';
const CONTENT_TYPE = 'application/json; charset=utf-8';

/** `GET|POST /api/endpoints/query/:idOrName` and `GET /api/endpoints/:idOrName/sql`. */
export function queryRoutes(ctx: AppContext, service: EndpointQueryService): Router {
  const router = Router();
  const requireQuery = ctx.auth.require('query');

  const run = async (req: Request, res: Response) => {
    const input = collectInput(withoutUrlKey(req.query as Record<string, unknown>), req.method === 'POST' ? req.body : undefined);
    const result = await service.run(String(req.params.idOrName), { input, redact: wantsRedaction(req) });
    res.status(200).set('X-Cache', result.cache).type(CONTENT_TYPE).send(result.body);
  };
  router.get(QUERY_ROUTE, requireQuery, run);
  // jsonBody: a JSON body of at most 1 MB, and 415 for a body of another Content-Type
  // (text/plain, multipart, form): express.json() alone skips those, so their parameters (and
  // `sql`) would be silently ignored and the endpoint run without them (test/hardening/bad-input.test.ts).
  router.post(QUERY_ROUTE, requireQuery, jsonBody, run);

  router.get('/api/endpoints/:idOrName/sql', ctx.auth.require('admin'), async (req, res) => {
    const input = collectInput(withoutUrlKey(req.query as Record<string, unknown>), undefined);
    const explain = input.explain === 'true';
    res.json(await service.plan(String(req.params.idOrName), { input, redact: wantsRedaction(req) }, explain));
  });
  return router;
}

/**
 * `GET /api/endpoints/query/<name>?<query>` whose name needs no decoding and whose query string
 * Express parses as it is (parseurl's fast case: no `#`, no white space).
 */
const FAST_URL = /^\/api\/endpoints\/query\/([A-Za-z0-9_.-]+)(?:\?([^#\s]*))?$/;

/** Where `serve` leaves a request whose cache fetch failed, for the app's middleware to answer with the error. */
const FAILED = Symbol('fastQueryFailed');
type FastRequest = IncomingMessage & { [FAILED]?: { err: unknown; started: number }; apiKey?: ApiKeyRecord };

export interface FastQueryRoute {
  /** First middleware of the app (requests given to the app directly, as in tests with supertest). */
  middleware: RequestHandler;
  /**
   * Before the app (src/http/server.ts): true when this request is answered here, false when the
   * app must take it. `app` gets it back with the error if the cache fetch fails.
   */
  serve(req: IncomingMessage, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => void): boolean;
}

/**
 * perf: the fast path of the hot call, a GET of a caching endpoint, before Express dispatch
 * (BENCHMARKS.md, cache hit: Express dispatch through the app's routers, the key lookup, query
 * parsing, parameter validation and the cache key were most of the service's cost over its floor).
 * It answers only when every check can be made from what this process already has: a cached key
 * lookup granting the query scope, an endpoint looked up within the last second, and the prepared
 * run of the raw query string (parameters validated and cache key computed once per endpoint
 * version). Every other request, including every one that would be refused and conditional ones
 * (res.send may answer 304), goes to the ordinary route, which answers as before; so does an error
 * of the cache fetch. Status, headers, body and metrics are those of the ordinary route.
 */
export function fastQueryRoute(ctx: AppContext, service: EndpointQueryService): FastQueryRoute {
  const { httpRequests, httpDuration } = ctx.metrics;
  const routeLabel = { route: QUERY_ROUTE };
  const okLabels = { route: QUERY_ROUTE, status: '200' };
  const record = (status: number, started: number) => {
    httpRequests.inc(status === 200 ? okLabels : { route: QUERY_ROUTE, status: String(status) });
    httpDuration.observe(routeLabel, (performance.now() - started) / 1000);
  };

  /** The prepared run of a request the fast path can answer, after its key is checked; undefined for the ordinary route. */
  const prepare = (req: FastRequest): PreparedRun | undefined => {
    if (req.method !== 'GET') return undefined;
    const headers = req.headers;
    if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return undefined;
    const match = FAST_URL.exec(req.url!);
    if (match === null) return undefined;
    // The key may be in the URL: the prepared run (and its map key) sees the query without it.
    const query = splitUrlKey(match[2] ?? '');
    const key = keyOfHeaders(headers, query.key);
    const apiKey = key ? ctx.auth.peek(key, 'query') : undefined;
    if (apiKey === undefined) return undefined;
    const redact = (headers['lf-endpoint-redact-pii'] as string | undefined)?.trim().toLowerCase() === 'true';
    const prepared = service.preparedRun(match[1]!, query.rest, redact);
    if (prepared !== undefined) req.apiKey = apiKey;
    return prepared;
  };

  /** What res.send writes for the ordinary route, headers in its order; the body goes out with them in one write. */
  const send = (res: ServerResponse, outcome: CacheOutcome, started: number) => {
    res.writeHead(200, [
      'X-Cache',
      outcome.status,
      'Content-Type',
      CONTENT_TYPE,
      'Content-Length',
      String(Buffer.byteLength(outcome.body)),
    ]);
    res.end(outcome.body);
    record(200, started);
  };

  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    const fast = req as FastRequest;
    const failed = fast[FAILED];
    if (failed !== undefined) {
      fast[FAILED] = undefined;
      res.once('finish', () => record(res.statusCode, failed.started));
      return next(failed.err);
    }
    const started = performance.now();
    const prepared = prepare(fast);
    if (prepared === undefined) return next();
    ctx.cache.fetch(prepared.request, prepared.compute).then(
      (outcome) => {
        try {
          send(res, outcome, started);
        } catch (err) {
          next(err);
        }
      },
      (err: unknown) => {
        // As the ordinary route: the error middleware answers; the metrics see its status.
        res.once('finish', () => record(res.statusCode, started));
        next(err);
      },
    );
  };

  const serve = (req: FastRequest, res: ServerResponse, app: (req: IncomingMessage, res: ServerResponse) => void): boolean => {
    const started = performance.now();
    const prepared = prepare(req);
    if (prepared === undefined) return false;
    const fail = (err: unknown) => {
      req[FAILED] = { err, started };
      app(req, res);
    };
    ctx.cache.fetch(prepared.request, prepared.compute).then((outcome) => {
      try {
        send(res, outcome, started);
      } catch (err) {
        fail(err);
      }
    }, fail);
    return true;
  };

  return { middleware, serve };
}

function wantsRedaction(req: Request): boolean {
  return (req.get(REDACT_HEADER) ?? '').trim().toLowerCase() === 'true';
}
