/**
 * `/api/access-tokens`: the original service's management of access tokens, over the same keys
 * as `/api/keys` (docs/API.md, "Access tokens"). A token's scopes are one space-separated string
 * in the original's words: `private` (our `admin`), `query`, `ingest`, `public` (deprecated:
 * ingest), `query:endpoint:<endpoint id>`, `ingest:source:<source id>`.
 *
 *   POST   /api/access-tokens {"description": "shipper", "scopes": "ingest"} → 201 {id, token, description, scopes, inserted_at}
 *   GET    /api/access-tokens → [{id, token: null, description, scopes, inserted_at}]  (only hashes are kept)
 *   DELETE /api/access-tokens/:token → 204 (the token itself, as the original takes it, or its id)
 */
import { Router } from 'express';
import { BadRequestError, NotFoundError, UnprocessableError } from '../errors.js';
import { jsonBody } from '../http/body.js';
import { isUuid } from '../ids.js';
import type { Authenticator } from './authenticate.js';
import { generateKey, type ApiKeyRecord, type ApiKeyRepository } from './keys.js';
import { resourceScope, type KeyScope } from './scopes.js';

/** The original's scope words that are not ours. */
const FROM_ORIGINAL: Record<string, KeyScope> = { private: 'admin', query: 'query', ingest: 'ingest', public: 'ingest' };

/**
 * Our scopes of an original scope string (422 naming what is not one). An empty string is the
 * original's legacy token, which may ingest.
 */
export function fromOriginalScopes(text: string, location = 'scopes'): KeyScope[] {
  const words = text.split(/\s+/).filter(Boolean);
  if (!words.length) return ['ingest'];
  const scopes = new Set<KeyScope>();
  for (const word of words) {
    const scope = FROM_ORIGINAL[word] ?? resourceScope(word);
    if (scope === undefined) {
      const why =
        word === 'partner'
          ? '"partner" cannot be assigned'
          : /^(query:endpoint|ingest:source):/.test(word)
            ? `"${word}" must name the endpoint's or source's id (a UUID)`
            : `"${word}" is not a scope: private, query, ingest, query:endpoint:<id>, ingest:source:<id>`;
      throw new UnprocessableError(`scopes contains an unrecognized scope: ${why}.`, [
        { domain: 'accessTokens', reason: 'invalidScope', message: why, location },
      ]);
    }
    scopes.add(scope);
  }
  return [...scopes];
}

/** Our scopes in the original's words. */
export function toOriginalScopes(scopes: readonly KeyScope[]): string {
  return scopes.map((s) => (s === 'admin' ? 'private' : s)).join(' ');
}

function present(record: ApiKeyRecord, token: string | null = null) {
  return {
    id: record.id,
    token,
    description: record.name,
    scopes: toOriginalScopes(record.scopes),
    inserted_at: record.created_at,
  };
}

export interface AccessTokenRoutesDeps {
  auth: Pick<Authenticator, 'require' | 'forget'>;
  keys: Pick<ApiKeyRepository, 'create' | 'list' | 'delete' | 'deleteByKey'>;
}

export function accessTokenRoutes({ auth, keys }: AccessTokenRoutesDeps): Router {
  const router = Router();
  const admin = auth.require('admin');

  router.get('/api/access-tokens', admin, async (_req, res) => {
    res.json((await keys.list()).map((k) => present(k)));
  });
  router.post('/api/access-tokens', admin, jsonBody, async (req, res) => {
    const { description, scopes } = tokenBody(req.body);
    const token = generateKey();
    const record = await keys.create(description, token, scopes);
    res.status(201).json(present(record, token));
  });
  router.delete('/api/access-tokens/:token', admin, async (req, res) => {
    const token = String(req.params.token);
    const deleted = (isUuid(token) && (await keys.delete(token))) || (await keys.deleteByKey(token));
    if (!deleted) {
      throw new NotFoundError('No such access token.', [
        { domain: 'accessTokens', reason: 'notFound', message: 'unknown token', location: 'token' },
      ]);
    }
    auth.forget();
    res.status(204).end();
  });
  return router;
}

/** `description` (any text; a label) and `scopes` (the original's string); other fields are ignored, as the original does. */
function tokenBody(body: unknown): { description: string; scopes: KeyScope[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestError('The request body must be a JSON object like {"description": "shipper", "scopes": "ingest"}.', [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  }
  const { description, scopes } = body as { description?: unknown; scopes?: unknown };
  const invalid = (location: string, message: string) =>
    new UnprocessableError(`${message}.`, [{ domain: 'accessTokens', reason: 'invalidValue', message, location }]);
  if (
    description !== undefined &&
    description !== null &&
    (typeof description !== 'string' || description.length > 200 || description.includes('\0'))
  )
    throw invalid('description', 'description must be a string of at most 200 characters');
  if (scopes !== undefined && scopes !== null && typeof scopes !== 'string')
    throw invalid('scopes', 'scopes must be a string of space-separated scopes, such as "ingest query"');
  return {
    description: typeof description === 'string' && description.trim() ? description.trim() : 'access token',
    scopes: fromOriginalScopes(typeof scopes === 'string' ? scopes : ''),
  };
}
