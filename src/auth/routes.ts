/**
 * `POST /api/keys` `{"name", "scopes"}` → 201 with the key (shown this once; only its hash is
 * stored), `GET /api/keys` (never a key or hash), `DELETE /api/keys/:id` (revoked at once on
 * this replica; other replicas stop accepting it within the Authenticator's cache lifetime).
 */
import { Router } from 'express';
import type { Scope } from '../config.js';
import type { AppContext } from '../context.js';
import { BadRequestError, NotFoundError, UnprocessableError } from '../errors.js';
import { jsonBody } from '../http/body.js';
import { generateKey, SCOPES, type ApiKeyRecord } from './keys.js';

export function keyRoutes(ctx: AppContext): Router {
  const router = Router();
  const admin = ctx.auth.require('admin');

  router.post('/api/keys', admin, jsonBody, async (req, res) => {
    const { name, scopes } = keyBody(req.body);
    const key = generateKey();
    const record = await ctx.keys.create(name, key, scopes);
    res.status(201).json({ ...present(record), key });
  });
  router.get('/api/keys', admin, async (_req, res) => {
    res.json((await ctx.keys.list()).map(present));
  });
  router.delete('/api/keys/:id', admin, async (req, res) => {
    const id = String(req.params.id);
    if (!(await ctx.keys.delete(id))) {
      throw new NotFoundError(`No API key with id "${id}".`, [
        { domain: 'keys', reason: 'notFound', message: 'unknown key id', location: 'id' },
      ]);
    }
    ctx.auth.forget();
    res.status(204).end();
  });
  return router;
}

function present(k: ApiKeyRecord) {
  return { id: k.id, name: k.name, prefix: k.prefix, scopes: k.scopes, created_at: k.created_at };
}

function keyBody(body: unknown): { name: string; scopes: Scope[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestError('The request body must be a JSON object like {"name": "shipper", "scopes": ["ingest"]}.', [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  }
  const { name, scopes, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra) throw invalid(extra, `unknown field "${extra}": a key has name and scopes`);
  if (typeof name !== 'string' || name.trim() === '' || name.length > 200 || name.includes('\0')) {
    throw invalid('name', 'name is required: a label of 1 to 200 characters');
  }
  if (!Array.isArray(scopes) || scopes.length === 0 || !scopes.every((s): s is Scope => SCOPES.includes(s as Scope))) {
    throw invalid('scopes', `scopes must be a non-empty array of ${SCOPES.map((s) => `"${s}"`).join(', ')}`);
  }
  return { name: name.trim(), scopes: [...new Set(scopes)] };
}

function invalid(location: string, message: string): UnprocessableError {
  return new UnprocessableError(message.charAt(0).toUpperCase() + message.slice(1) + '.', [
    { domain: 'keys', reason: 'invalidValue', message, location },
  ]);
}
