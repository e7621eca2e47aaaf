import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Scope } from '../config.js';
import { ForbiddenError, TooManyRequestsError, UnauthenticatedError } from '../errors.js';
import type { ApiKeyRecord, ApiKeyRepository } from './keys.js';
import { LRUCache } from 'lru-cache';
import { LookupCache } from '../lookupCache.js';
import { clientAddress, UnknownKeyLimiter } from './unknownKeys.js';
import { splitUrlKey } from './urlKey.js';
import { grants, reaches } from './scopes.js';

declare module 'express-serve-static-core' {
  interface Request {
    apiKey?: ApiKeyRecord;
  }
}

/**
 * The key of a request: `X-API-KEY`, else `Authorization: Bearer <key>`, else the `api_key`
 * query parameter (the self-hosted stack's log shipper puts the key in the URL). Headers win
 * when both are present. The URL key is never logged (the error log has `path`, without the
 * query string), never part of a cache key (queryRoutes.ts strips it first) and never echoed.
 *
 * security: the one place a key is read from a request. Authentication, the rate-limit step and
 * the GET fast path all call it (or keyOfHeaders with splitUrlKey, which it is made of), on the
 * raw query string, so they cannot disagree on which key a request carries: a rate-limit step
 * that matched only a literal `api_key` let `api%5Fkey=…` (which Express decodes and
 * authenticated with) through unlimited (issue 25, finding 3).
 */
export function requestKey(req: IncomingMessage): string | undefined {
  const url = (req as Partial<Request>).originalUrl ?? req.url ?? '';
  const q = url.indexOf('?');
  return keyOfHeaders(req.headers, q < 0 ? undefined : splitUrlKey(url.slice(q + 1)).key);
}

/** `requestKey` from the request's headers and the key splitUrlKey found in its query string. */
export function keyOfHeaders(headers: IncomingHttpHeaders, urlKey?: string): string | undefined {
  return keyFrom(headers['x-api-key'] as string | undefined, headers.authorization) ?? urlKey;
}

function keyFrom(header: string | undefined, auth: string | undefined): string | undefined {
  if (header) return header.trim();
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
  return m ? m[1].trim() : undefined;
}

/**
 * Whether the request's key (`req.apiKey`, set by `require` or `identifyIfAny`) may use `scope` on
 * the resource `id`: 401 without a known key, 403 when its scopes do not cover it
 * (src/auth/scopes.ts). Keys limited to other resources get the same 403 as keys without the scope.
 */
export function authorize(req: Request, scope: Scope, id: string): void {
  const record = req.apiKey;
  if (!record) throw requestKey(req) ? new UnauthenticatedError('The API key is not valid.') : new UnauthenticatedError();
  if (!grants(record.scopes, scope, id)) throw lacks(scope, true);
}

function lacks(scope: Scope, forResource = false): ForbiddenError {
  return new ForbiddenError(`This API key lacks the "${scope}" scope${forResource ? ' for this resource' : ''}.`);
}

/** perf: a key in use is looked up again in the background this long before its cached lookup expires. */
const REFRESH_AHEAD_MS = 1_000;

/**
 * Middleware: 401 without a known key, 403 when the key lacks `scope` (admin may do everything).
 * Lookups are cached for a few seconds (src/lookupCache.ts): a revoked key stops working within
 * that time on other replicas and at once on the replica that revoked it (see `forget`).
 *
 * security: keys found and keys not found are cached apart, so a flood of unknown keys cannot
 * push known ones out; and the lookups that find nothing are limited per client address
 * (src/auth/unknownKeys.ts, UNKNOWN_KEY_LOOKUPS_PER_MINUTE; issue 25, finding 10).
 */
export class Authenticator {
  private readonly cache: LookupCache<ApiKeyRecord | undefined>;
  /** Keys a lookup did not find, for as long as found ones are cached. */
  private readonly unknown: LRUCache<string, true>;
  private readonly unknownLookups: UnknownKeyLimiter;

  /**
   * `ttlMs`: how long a lookup is trusted; `now`: the clock of that lifetime (tests move theirs by
   * hand); `unknownKeyLookupsPerMinute`: src/auth/unknownKeys.ts; `cachedKeys`: entries of each
   * lookup cache (found keys, and keys not found).
   */
  constructor(
    keys: ApiKeyRepository,
    {
      ttlMs = 5_000,
      now,
      unknownKeyLookupsPerMinute = 60,
      cachedKeys = 10_000,
    }: { ttlMs?: number; now?: () => number; unknownKeyLookupsPerMinute?: number; cachedKeys?: number } = {},
  ) {
    this.cache = new LookupCache({
      ttlMs,
      refreshAheadMs: REFRESH_AHEAD_MS,
      maxEntries: cachedKeys,
      load: (key) => keys.findByKey(key),
      keep: (record) => record !== undefined,
      now,
    });
    this.unknown = new LRUCache({ max: cachedKeys, ttl: ttlMs, ttlResolution: 0 });
    this.unknownLookups = new UnknownKeyLimiter(unknownKeyLookupsPerMinute, now);
  }

  /**
   * perf: the record of a key with `scope` when a cached lookup says so, without a promise;
   * undefined in every other case (not cached, expired, unknown, lacking the scope), where the
   * `require` middleware must decide (and answer 401/403).
   */
  peek(key: string, scope: Scope): ApiKeyRecord | undefined {
    const record = this.cache.peek(key)?.value;
    if (!record || !reaches(record.scopes, scope)) return undefined;
    return record;
  }

  /**
   * The record of a key: at once when its lookup is cached, else a promise; undefined for an
   * unknown key. TooManyRequestsError (429) when the key must be looked up and `req`'s address has
   * spent its lookups of unknown keys.
   */
  identify(key: string, req: IncomingMessage): ApiKeyRecord | undefined | Promise<ApiKeyRecord | undefined> {
    const cached = this.cache.peek(key);
    if (cached) return cached.value;
    if (this.unknown.has(key)) return undefined;
    const address = clientAddress(req);
    const waitMs = this.unknownLookups.take(address);
    if (waitMs !== undefined) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new TooManyRequestsError(`Too many unknown API keys from this address; retry in ${seconds} s.`, seconds, 'unknownKeys');
    }
    return Promise.resolve(this.cache.get(key)).then(
      (record) => {
        if (record) this.unknownLookups.giveBack(address);
        else this.unknown.set(key, true);
        return record;
      },
      (err: unknown) => {
        // The database did not answer (503): nothing was learnt of the key, so it does not count.
        // Counted, a client's valid key became 429 "unknown keys" during an outage.
        this.unknownLookups.giveBack(address);
        throw err;
      },
    );
  }

  require(scope: Scope) {
    return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
      const key = requestKey(req);
      if (!key) throw new UnauthenticatedError();
      const record = await this.identify(key, req);
      if (!record) throw new UnauthenticatedError('The API key is not valid.');
      if (!reaches(record.scopes, scope)) throw lacks(scope);
      req.apiKey = record;
      next();
    };
  }

  /**
   * Middleware of routes whose resource decides (a public endpoint needs no key): the record of
   * a known key on `req.apiKey`, nothing else; `authorize` decides once the resource is known.
   */
  identifyIfAny() {
    return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
      const key = requestKey(req);
      if (key) req.apiKey = await this.identify(key, req);
      next();
    };
  }

  /** Drops cached lookups, e.g. after a key is deleted. */
  forget(): void {
    this.cache.clear();
    this.unknown.clear();
  }
}
