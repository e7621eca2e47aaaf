/**
 * Who may run an endpoint (docs/API.md, "Public endpoints", "Keys and scopes"), decided once it
 * is looked up: a public one (`enable_auth: false`) anyone, each client address limited as a key
 * with the default limits is (RATE_LIMIT_PER_SECOND and the query limits); any other a key whose
 * scopes cover it (`query`, `admin`, or `query:endpoint:<its id>`). An unknown endpoint is 401
 * without a key, as the original service answers, so a caller without one learns nothing of
 * which names exist.
 */
import type { Request } from 'express';
import { authorize } from '../auth/authenticate.js';
import { reaches } from '../auth/scopes.js';
import type { KeyLimiter, LimitedKey } from '../rateLimit/index.js';
import { ForbiddenError } from '../errors.js';
import type { EndpointRecord } from './repository.js';

export type EndpointAccess = (req: Request) => (endpoint: EndpointRecord | undefined) => Promise<LimitedKey | undefined>;

export function endpointAccess(limiter: Pick<KeyLimiter, 'request'>): EndpointAccess {
  return (req) => async (endpoint) => {
    if (endpoint && !endpoint.enable_auth) {
      if (req.apiKey) return undefined; // its own limits, counted by the request pipeline
      const caller = publicCaller(req);
      await limiter.request(caller);
      return caller;
    }
    if (endpoint) {
      authorize(req, 'query', endpoint.id);
      return undefined;
    }
    if (!req.apiKey) authorize(req, 'query', ''); // 401, without a key or with an unknown one
    if (!reaches(req.apiKey!.scopes, 'query')) throw new ForbiddenError('This API key lacks the "query" scope.');
    return undefined; // the lookup answers 404
  };
}

/** A caller of a public endpoint without a key, limited by its address (the socket's, or X-Forwarded-For's with `trust proxy`). */
function publicCaller(req: Request): LimitedKey {
  return { id: `address:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}` };
}
