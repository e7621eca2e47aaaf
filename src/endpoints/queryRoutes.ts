import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { jsonBody } from '../http/body.js';
import { keyOfHeaders, type Authenticator } from '../auth/authenticate.js';
import { grants } from '../auth/scopes.js';
import { splitUrlKey, withoutUrlKey } from '../auth/urlKey.js';
import type { CacheOutcome, ResultCache } from '../cache/types.js';
import { exchangeOf, handOver } from '../http/pipeline.js';
import type { BeforeApp } from '../http/server.js';
import type { EndpointQueryService, PreparedRun } from './queryService.js';
import type { EndpointAccess } from './access.js';
import { collectInput } from './params.js';

/** Header that turns redaction on for one call (docs/API.md, "PII redaction"). */
export const REDACT_HEADER = 'LF-ENDPOINT-REDACT-PII';
const REDACT_HEADER_LOWER = REDACT_HEADER.toLowerCase();

/** The route's path, also its label in the HTTP metrics. */
export const QUERY_ROUTE = '/api/endpoints/query/:idOrName';
/** The original service's older paths of the same call (docs/COMPATIBILITY.md, "Management API"). */
export const LEGACY_QUERY_ROUTES = ['/endpoints/query/:idOrName', '/api/endpoints/query/name/:idOrName'];
const CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * CORS of the routes that run endpoints, and of no other (docs/API.md, "CORS"): any origin may
 * call them, with a key in a header, so a web page can embed an endpoint; management routes send
 * no CORS header, so a browser keeps a page of another origin from reading or preflighting them.
 */
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'X-Cache',
};
const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': `X-API-KEY, Authorization, Content-Type, ${REDACT_HEADER}`,
  'Access-Control-Max-Age': '86400',
};

/**
 * `GET|POST /api/endpoints/query/:idOrName` (and the legacy GET paths) and `GET
 * /api/endpoints/:idOrName/sql`. Who may run an endpoint is decided once it is looked up
 * (`access`): a public one needs no key.
 */
export function queryRoutes(
  auth: Pick<Authenticator, 'require' | 'identifyIfAny'>,
  service: EndpointQueryService,
  access: EndpointAccess,
): Router {
  const router = Router();
  const identify = auth.identifyIfAny();
  const cors: RequestHandler = (_req, res, next) => {
    res.set(CORS_HEADERS);
    next();
  };

  const run = async (req: Request, res: Response) => {
    const query = withoutUrlKey(req.query as Record<string, unknown>);
    // A GET may carry its parameters (and `sql`) in a JSON body, as the original service reads it, unless the URL has `sql`.
    const body: unknown = req.method === 'POST' || query.sql === undefined ? req.body : undefined;
    const input = collectInput(query, body);
    const result = await service.run(String(req.params.idOrName), {
      input,
      redact: redactionAsked(req.headers),
      key: req.apiKey,
      authorize: access(req),
    });
    res.status(200).set('X-Cache', result.cache).type(CONTENT_TYPE).send(result.body);
  };
  for (const path of [QUERY_ROUTE, ...LEGACY_QUERY_ROUTES]) {
    router.options(path, (_req, res) => void res.status(204).set(PREFLIGHT_HEADERS).end());
    // jsonBody: a JSON body of at most 1 MB, and 415 for a body of another Content-Type
    // (text/plain, multipart, form): express.json() alone skips those, so their parameters (and
    // `sql`) would be silently ignored and the endpoint run without them (test/hardening/bad-input.test.ts).
    router.get(path, cors, identify, jsonBody, run);
  }
  router.post(QUERY_ROUTE, cors, identify, jsonBody, run);

  router.get('/api/endpoints/:idOrName/sql', auth.require('admin'), async (req, res) => {
    const input = collectInput(withoutUrlKey(req.query as Record<string, unknown>), undefined);
    const explain = input.explain === 'true';
    res.json(await service.plan(String(req.params.idOrName), { input, redact: redactionAsked(req.headers) }, explain));
  });
  return router;
}

/**
 * `GET /api/endpoints/query/<name>?<query>` whose name needs no decoding and whose query string
 * Express parses as it is (parseurl's fast case: no `#`, no white space).
 */
const FAST_URL = /^\/api\/endpoints\/query\/([A-Za-z0-9_.-]+)(?:\?([^#\s]*))?$/;

export interface FastQueryRoute {
  /**
   * Before the app (src/http/server.ts), after the pipeline's steps: true when this request is
   * answered here, false when the app must take it. `app` gets it back with the error if the
   * cache fetch fails (handOver).
   */
  serve: BeforeApp;
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
 * of the cache fetch. The request pipeline (src/http/pipeline.ts) has run before either, so
 * status, headers, body and metrics are those of the ordinary route.
 */
export function fastQueryRoute(
  auth: Pick<Authenticator, 'peek'>,
  cache: Pick<ResultCache, 'fetch'>,
  service: EndpointQueryService,
): FastQueryRoute {
  /** The prepared run of a request the fast path can answer, after its key is checked; undefined for the ordinary route. */
  const prepare = (req: IncomingMessage): PreparedRun | undefined => {
    if (req.method !== 'GET') return undefined;
    const headers = req.headers;
    if (headers['if-none-match'] !== undefined || headers['if-modified-since'] !== undefined) return undefined;
    // A GET may carry parameters in a body, which only the ordinary route reads.
    if (headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0') return undefined;
    const match = FAST_URL.exec(req.url!);
    if (match === null) return undefined;
    // The key may be in the URL: the prepared run (and its map key) sees the query without it.
    const query = splitUrlKey(match[2] ?? '');
    const key = keyOfHeaders(headers, query.key);
    const apiKey = key ? auth.peek(key, 'query') : undefined;
    if (apiKey === undefined) return undefined;
    const prepared = service.preparedRun(match[1], query.rest, redactionAsked(headers));
    // A public endpoint (limited per address) and a key limited to other endpoints take the ordinary route.
    if (prepared === undefined || !prepared.endpoint.enable_auth || !grants(apiKey.scopes, 'query', prepared.endpoint.id)) return undefined;
    (req as Request).apiKey = apiKey;
    // From here on the request is this route's, in the metrics too, whoever answers it.
    const exchange = exchangeOf(req);
    if (exchange !== undefined) exchange.route = QUERY_ROUTE;
    return prepared;
  };

  /** What res.send writes for the ordinary route, headers in its order; the body goes out with them in one write. */
  const send = (res: ServerResponse, outcome: CacheOutcome) => {
    res.writeHead(200, [
      'X-Cache',
      outcome.status,
      'Content-Type',
      CONTENT_TYPE,
      'Content-Length',
      String(Buffer.byteLength(outcome.body)),
    ]);
    res.end(outcome.body);
  };

  /** Answers `req` from the cache, or calls `fail` with the error for the ordinary error answer. */
  const answer = (req: IncomingMessage, res: ServerResponse, prepared: PreparedRun, fail: (err: unknown) => void) => {
    // A miss runs the query within the caller's concurrent-query limit (src/rateLimit/).
    const key = (req as Request).apiKey;
    // Before any answer, an error's too, as the ordinary route's `cors` does.
    for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    cache
      .fetch(prepared.request, () => prepared.compute(key))
      .then((outcome) => {
        try {
          send(res, outcome);
        } catch (err) {
          fail(err);
        }
      }, fail);
  };

  const serve: BeforeApp = (req, res, app) => {
    const prepared = prepare(req);
    if (prepared === undefined) return false;
    answer(req, res, prepared, (err) => handOver(req, res, err, app));
    return true;
  };

  return { serve };
}

/** Whether the caller asks for redaction (docs/API.md, "PII redaction"): `LF-ENDPOINT-REDACT-PII: true`, any case, blanks around. */
export function redactionAsked(headers: IncomingHttpHeaders): boolean {
  const value = headers[REDACT_HEADER_LOWER];
  return typeof value === 'string' && value.trim().toLowerCase() === 'true';
}
