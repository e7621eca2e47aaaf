/**
 * The request-rate step of the request pipeline (src/http/pipeline.ts): before routing, so the
 * GET fast path of cache hits is limited like every other request.
 *
 * It limits requests that carry a known key only. A request without a key, or with an unknown
 * one, goes on to be refused by authentication (401); a known key is counted whatever it asks
 * for, including requests its scopes then refuse. Looking a key up may itself be refused: an
 * address that sent too many unknown keys gets 429 (src/auth/unknownKeys.ts).
 */
import type { Authenticator } from '../auth/authenticate.js';
import { requestKey } from '../auth/authenticate.js';
import type { Exchange, PipelineStep } from '../http/pipeline.js';
import type { KeyLimiter } from './index.js';

export function rateLimitStep(auth: Authenticator, limiter: KeyLimiter): PipelineStep {
  return {
    name: 'rate limit per key',
    run(exchange: Exchange) {
      const key = requestKey(exchange.req);
      if (key === undefined) return;
      const known = auth.identify(key, exchange.req);
      if (known === undefined) return;
      if (!(known instanceof Promise)) return limiter.request(known);
      return known.then((record) => (record ? limiter.request(record) : undefined));
    },
  };
}
