/**
 * `POST /api/keys` `{"name", "scopes"}` (and optionally its limits) → 201 with the key (shown
 * this once; only its hash is stored), `GET /api/keys` (never a key or hash), `PATCH
 * /api/keys/:id` with limits only, `DELETE /api/keys/:id` (revoked at once on this replica; other
 * replicas stop accepting it within the Authenticator's cache lifetime, which is also how long a
 * changed limit takes to reach them).
 */
import { Router } from 'express';
import type { Scope } from '../config.js';
import { BadRequestError, NotFoundError, UnprocessableError } from '../errors.js';
import { jsonBody } from '../http/body.js';
import type { Authenticator } from './authenticate.js';
import { generateKey, SCOPES, type ApiKeyRecord, type ApiKeyRepository } from './keys.js';
import { LIMIT_FIELDS, MAX_LIMIT, type KeyLimitFields } from '../rateLimit/limits.js';

export interface KeyRoutesDeps {
  auth: Pick<Authenticator, 'require' | 'forget'>;
  keys: Pick<ApiKeyRepository, 'create' | 'list' | 'delete' | 'setLimits'>;
}

export function keyRoutes({ auth, keys }: KeyRoutesDeps): Router {
  const router = Router();
  const admin = auth.require('admin');

  router.post('/api/keys', admin, jsonBody, async (req, res) => {
    const { name, scopes, limits } = keyBody(req.body);
    const key = generateKey();
    const record = await keys.create(name, key, scopes, limits);
    res.status(201).json({ ...present(record), key });
  });
  router.get('/api/keys', admin, async (_req, res) => {
    res.json((await keys.list()).map(present));
  });
  router.patch('/api/keys/:id', admin, jsonBody, async (req, res) => {
    const id = String(req.params.id);
    const record = await keys.setLimits(id, limitsBody(req.body));
    if (!record) throw unknownKey(id);
    auth.forget();
    res.json(present(record));
  });
  router.delete('/api/keys/:id', admin, async (req, res) => {
    const id = String(req.params.id);
    if (!(await keys.delete(id))) throw unknownKey(id);
    auth.forget();
    res.status(204).end();
  });
  return router;
}

function unknownKey(id: string): NotFoundError {
  return new NotFoundError(`No API key with id "${id}".`, [
    { domain: 'keys', reason: 'notFound', message: 'unknown key id', location: 'id' },
  ]);
}

function present(k: ApiKeyRecord) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    created_at: k.created_at,
    rate_limit_per_second: k.rate_limit_per_second,
    rate_limit_burst: k.rate_limit_burst,
    max_concurrent_queries: k.max_concurrent_queries,
  };
}

function objectBody(body: unknown, example: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestError(`The request body must be a JSON object like ${example}.`, [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  }
  return body as Record<string, unknown>;
}

/** The limit fields of a body: a whole number from 0 (no limit) to MAX_LIMIT, or null (the configured default). */
function limitsBody(body: unknown): Partial<KeyLimitFields> {
  const fields = objectBody(body, '{"rate_limit_per_second": 20}');
  const extra = Object.keys(fields).find((f) => !(LIMIT_FIELDS as readonly string[]).includes(f));
  if (extra) throw invalid(extra, `unknown field "${extra}": a key's limits are ${LIMIT_FIELDS.join(', ')}`);
  return pickLimits(fields);
}

function pickLimits(fields: Record<string, unknown>): Partial<KeyLimitFields> {
  const limits: Partial<KeyLimitFields> = {};
  for (const f of LIMIT_FIELDS) {
    const v = fields[f];
    if (v === undefined) continue;
    if (v !== null && !(Number.isInteger(v) && (v as number) >= 0 && (v as number) <= MAX_LIMIT)) {
      throw invalid(f, `${f} must be a whole number from 0 (no limit) to ${MAX_LIMIT}, or null for the configured default`);
    }
    limits[f] = v as number | null;
  }
  return limits;
}

function keyBody(body: unknown): { name: string; scopes: Scope[]; limits: Partial<KeyLimitFields> } {
  const { name, scopes, ...rest } = objectBody(body, '{"name": "shipper", "scopes": ["ingest"]}');
  const extra = Object.keys(rest).find((f) => !(LIMIT_FIELDS as readonly string[]).includes(f));
  if (extra) throw invalid(extra, `unknown field "${extra}": a key has name, scopes and ${LIMIT_FIELDS.join(', ')}`);
  if (typeof name !== 'string' || name.trim() === '' || name.length > 200 || name.includes('\0')) {
    throw invalid('name', 'name is required: a label of 1 to 200 characters');
  }
  if (!Array.isArray(scopes) || scopes.length === 0 || !scopes.every((s): s is Scope => SCOPES.includes(s as Scope))) {
    throw invalid('scopes', `scopes must be a non-empty array of ${SCOPES.map((s) => `"${s}"`).join(', ')}`);
  }
  return { name: name.trim(), scopes: [...new Set(scopes)], limits: pickLimits(rest) };
}

function invalid(location: string, message: string): UnprocessableError {
  return new UnprocessableError(message.charAt(0).toUpperCase() + message.slice(1) + '.', [
    { domain: 'keys', reason: 'invalidValue', message, location },
  ]);
}
