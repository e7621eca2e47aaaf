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
  const header = req.get('x-api-key');
  if (header) return header.trim();
  const auth = req.get('authorization');
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
  return m ? m[1]!.trim() : undefined;
}

/**
 * Middleware: 401 without a known key, 403 when the key lacks `scope` (admin may do everything).
 * Lookups are cached for a few seconds: a revoked key stops working within that time on other
 * replicas and at once on the replica that revoked it (see `forget`).
 */
export class Authenticator {
  private readonly cache = new Map<string, { record: ApiKeyRecord | undefined; until: number }>();

  constructor(private readonly keys: ApiKeyRepository, private readonly ttlMs = 5_000) {}

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
  }

  private async lookup(key: string): Promise<ApiKeyRecord | undefined> {
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.record;
    const record = await this.keys.findByKey(key);
    if (this.cache.size > 10_000) this.cache.clear(); // bounded: random invalid keys cannot grow it forever
    this.cache.set(key, { record, until: now + this.ttlMs });
    return record;
  }
}
