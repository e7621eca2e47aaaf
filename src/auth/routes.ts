/**
 * `POST /api/keys` `{"name", "scopes"}` → 201 with the key (shown this once; only its hash is
 * stored), `GET /api/keys` (never a key or hash), `DELETE /api/keys/:id` (revoked at once on
 * this replica; other replicas stop accepting it within the Authenticator's cache lifetime).
 */
import { Router } from 'express';
import type { Scope } from '../config.js';
import { Type, type Static } from '@sinclair/typebox';
import { compile, NO_NUL, NOT_BLANK, notAnObject, problem } from '../api/validation.js';
import { BadRequestError, NotFoundError, UnprocessableError } from '../errors.js';
import { jsonBody } from '../http/body.js';
import type { Authenticator } from './authenticate.js';
import { generateKey, SCOPES, type ApiKeyRecord, type ApiKeyRepository } from './keys.js';

/** The body of `POST /api/keys` (docs/API.md, "Keys"). */
export const KeyBodySchema = Type.Object(
  {
    name: Type.String({
      pattern: NOT_BLANK,
      maxLength: 200,
      ...NO_NUL,
      description: 'A label for the key.',
      ...problem('invalidValue', 'name is required: a label of 1 to 200 characters'),
    }),
    scopes: Type.Array(Type.Union(SCOPES.map((s) => Type.Literal(s))), {
      minItems: 1,
      description: 'What the key may do: run endpoints, ingest events, or everything.',
      ...problem('invalidValue', `scopes must be a non-empty array of ${SCOPES.map((s) => `"${s}"`).join(', ')}`),
    }),
  },
  { additionalProperties: false, ...problem('invalidValue', 'unknown field "{field}": a key has name and scopes') },
);
const checkKeyBody = compile(KeyBodySchema);

export interface KeyRoutesDeps {
  auth: Pick<Authenticator, 'require' | 'forget'>;
  keys: Pick<ApiKeyRepository, 'create' | 'list' | 'delete'>;
}

export function keyRoutes({ auth, keys }: KeyRoutesDeps): Router {
  const router = Router();
  const admin = auth.require('admin');

  router.post('/api/keys', admin, jsonBody, async (req, res) => {
    const { name, scopes } = keyBody(req.body);
    const key = generateKey();
    const record = await keys.create(name, key, scopes);
    res.status(201).json({ ...present(record), key });
  });
  router.get('/api/keys', admin, async (_req, res) => {
    res.json((await keys.list()).map(present));
  });
  router.delete('/api/keys/:id', admin, async (req, res) => {
    const id = String(req.params.id);
    if (!(await keys.delete(id))) {
      throw new NotFoundError(`No API key with id "${id}".`, [
        { domain: 'keys', reason: 'notFound', message: 'unknown key id', location: 'id' },
      ]);
    }
    auth.forget();
    res.status(204).end();
  });
  return router;
}

function present(k: ApiKeyRecord) {
  return { id: k.id, name: k.name, prefix: k.prefix, scopes: k.scopes, created_at: k.created_at };
}

function keyBody(body: unknown): { name: string; scopes: Scope[] } {
  const failures = checkKeyBody(body);
  if (notAnObject(failures)) {
    throw new BadRequestError('The request body must be a JSON object like {"name": "shipper", "scopes": ["ingest"]}.', [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  }
  // An unknown field first, then the fields in the schema's order.
  const first = failures.find((f) => f.keyword === 'additionalProperties') ?? failures.find((f) => f.location === 'name') ?? failures[0];
  if (first) throw invalid(first.location, first.message);
  const { name, scopes } = body as Static<typeof KeyBodySchema>;
  return { name: name.trim(), scopes: [...new Set(scopes)] };
}

function invalid(location: string, message: string): UnprocessableError {
  return new UnprocessableError(message.charAt(0).toUpperCase() + message.slice(1) + '.', [
    { domain: 'keys', reason: 'invalidValue', message, location },
  ]);
}
