import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Scope } from '../config.js';
import { ForbiddenError, UnauthenticatedError } from '../errors.js';
import type { ApiKeyRecord, ApiKeyRepository } from './keys.js';

declare module 'express-serve-static-core' {
  interface Request {
    apiKey?: ApiKeyRecord;
  }
}

/** The key of a request: `X-API-KEY`, or `Authorization: Bearer <key>`. Keys in the URL are not accepted. */
export function keyOf(req: Request): string | undefined {
  return keyFrom(req.get('x-api-key'), req.get('authorization'));
}

/** `keyOf` from the request's headers (the GET fast path has no Express request). */
export function keyOfHeaders(headers: IncomingHttpHeaders): string | undefined {
  return keyFrom(headers['x-api-key'] as string | undefined, headers.authorization);
}

function keyFrom(header: string | undefined, auth: string | undefined): string | undefined {
  if (header) return header.trim();
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
  return m ? m[1]!.trim() : undefined;
}

/** perf: a key in use is looked up again in the background this long before its cached lookup expires. */
const REFRESH_AHEAD_MS = 1_000;

/**
 * Middleware: 401 without a known key, 403 when the key lacks `scope` (admin may do everything).
 * Lookups are cached for a few seconds: a revoked key stops working within that time on other
 * replicas and at once on the replica that revoked it (see `forget`). Concurrent lookups of one
 * key share one query, and a key in use is looked up again shortly before its entry expires, so
 * requests do not wait for the database every few seconds.
 */
export class Authenticator {
  private readonly cache = new Map<string, { record: ApiKeyRecord | undefined; until: number }>();
  private readonly pending = new Map<string, Promise<ApiKeyRecord | undefined>>();
  /** Bumped by `forget`: a lookup that started before is not stored. */
  private generation = 0;

  constructor(private readonly keys: ApiKeyRepository, private readonly ttlMs = 5_000) {}

  /**
   * perf: the record of a key with `scope` when a cached lookup says so, without a promise;
   * undefined in every other case (not cached, expired, unknown, lacking the scope), where the
   * `require` middleware must decide (and answer 401/403).
   */
  peek(key: string, scope: Scope): ApiKeyRecord | undefined {
    const hit = this.cache.get(key);
    if (!hit) return undefined;
    const left = hit.until - Date.now();
    if (left <= 0) return undefined;
    if (left < REFRESH_AHEAD_MS) this.refresh(key);
    const record = hit.record;
    if (!record || (!record.scopes.includes(scope) && !record.scopes.includes('admin'))) return undefined;
    return record;
  }

  require(scope: Scope) {
    return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
      const key = keyOf(req);
      if (!key) throw new UnauthenticatedError();
      const record = await this.lookup(key);
      if (!record) throw new UnauthenticatedError('The API key is not valid.');
      if (!record.scopes.includes(scope) && !record.scopes.includes('admin')) {
        throw new ForbiddenError(`This API key lacks the "${scope}" scope.`);
      }
      req.apiKey = record;
      next();
    };
  }

  /** Drops cached lookups, e.g. after a key is deleted. */
  forget(): void {
    this.cache.clear();
    this.pending.clear();
    this.generation++;
  }

  private lookup(key: string): Promise<ApiKeyRecord | undefined> | ApiKeyRecord | undefined {
    const hit = this.cache.get(key);
    if (hit) {
      const left = hit.until - Date.now();
      if (left > 0) {
        if (left < REFRESH_AHEAD_MS) this.refresh(key);
        return hit.record;
      }
    }
    return this.query(key);
  }

  private refresh(key: string): void {
    if (!this.pending.has(key)) this.query(key).catch(() => undefined);
  }

  /** One query per key at a time; the answer is reused until `ttlMs` after the query started. */
  private query(key: string): Promise<ApiKeyRecord | undefined> {
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const started = Date.now();
    const generation = this.generation;
    const done = () => {
      if (this.pending.get(key) === lookup) this.pending.delete(key);
    };
    const lookup = this.keys.findByKey(key).then(
      (record) => {
        done();
        if (generation === this.generation) {
          if (this.cache.size > 10_000 && !this.cache.has(key)) this.cache.clear(); // bounded: random invalid keys cannot grow it forever
          this.cache.set(key, { record, until: started + this.ttlMs });
        }
        return record;
      },
      (err) => {
        done();
        throw err;
      },
    );
    this.pending.set(key, lookup);
    return lookup;
  }
}
