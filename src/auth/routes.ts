/**
 * `POST /api/keys` `{"name", "scopes"}` (and optionally its limits) → 201 with the key (shown
 * this once; only its hash is stored), `GET /api/keys` (never a key or hash), `PATCH
 * /api/keys/:id` with limits only, `DELETE /api/keys/:id` (revoked at once on this replica; other
 * replicas stop accepting it within the Authenticator's cache lifetime, which is also how long a
 * changed limit takes to reach them).
 */
import { Router } from 'express';
import type { Scope } from '../config.js';
import { Type, type Static } from '@sinclair/typebox';
import { compile, NO_NUL, NOT_BLANK, notAnObject, problem } from '../http/validation.js';
import { BadRequestError, NotFoundError, UnprocessableError } from '../errors.js';
import { jsonBody } from '../http/body.js';
import { pick } from '../http/present.js';
import type { Authenticator } from './authenticate.js';
import { generateKey, SCOPES, type ApiKeyRecord, type ApiKeyRepository } from './keys.js';
import { RESOURCE_SCOPE_PATTERN, resourceScope, type KeyScope } from './scopes.js';
import { LIMIT_FIELDS, MAX_LIMIT, type KeyLimitFields } from './keyLimits.js';

/** A limit of a key: a whole number, 0 for no limit, or null for the configured default. */
function limitField(field: string, description: string) {
  return Type.Optional(
    Type.Union([Type.Integer({ minimum: 0, maximum: MAX_LIMIT }), Type.Null()], {
      description: `${description} 0: no limit; null: the configured default.`,
      ...problem('invalidValue', `${field} must be a whole number from 0 (no limit) to ${MAX_LIMIT}, or null for the configured default`),
    }),
  );
}

/** The limit fields of a key (docs/API.md, "Rate limits"), in `POST /api/keys` and `PATCH /api/keys/:id`. */
const LIMIT_PROPERTIES = {
  rate_limit_per_second: limitField('rate_limit_per_second', 'Requests per second on average (docs/API.md, "Rate limits").'),
  rate_limit_burst: limitField('rate_limit_burst', 'Requests a quiet key may send at once.'),
  max_concurrent_queries: limitField('max_concurrent_queries', 'Uncached queries of this key running at once.'),
  query_ms_per_second: limitField('query_ms_per_second', 'Milliseconds of database query time the key gains per second.'),
  query_ms_burst: limitField('query_ms_burst', 'Milliseconds of database query time the key may have in hand.'),
};

/** The body of `PATCH /api/keys/:id`: limits only. */
export const KeyLimitsBodySchema = Type.Object(LIMIT_PROPERTIES, {
  additionalProperties: false,
  ...problem('invalidValue', `unknown field "{field}": a key's limits are ${LIMIT_FIELDS.join(', ')}`),
});
const checkLimitsBody = compile(KeyLimitsBodySchema);

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
    scopes: Type.Array(Type.Union([...SCOPES.map((s) => Type.Literal(s)), Type.String({ pattern: RESOURCE_SCOPE_PATTERN })]), {
      minItems: 1,
      description:
        'What the key may do: run endpoints, ingest events, or everything; or run one endpoint (`query:endpoint:<id>`), ingest into one source (`ingest:source:<id>`).',
      ...problem(
        'invalidValue',
        `scopes must be a non-empty array of ${SCOPES.map((s) => `"${s}"`).join(', ')}, "query:endpoint:<endpoint id>", "ingest:source:<source id>"`,
      ),
    }),
    ...LIMIT_PROPERTIES,
  },
  {
    additionalProperties: false,
    ...problem('invalidValue', `unknown field "{field}": a key has name, scopes and ${LIMIT_FIELDS.join(', ')}`),
  },
);
const checkKeyBody = compile(KeyBodySchema);

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
  return pick(k, ['id', 'name', 'prefix', 'scopes', 'created_at', ...LIMIT_FIELDS]);
}

/** The limit fields of a body: a whole number from 0 (no limit) to MAX_LIMIT, or null (the configured default). */
function limitsBody(body: unknown): Partial<KeyLimitFields> {
  const failures = checkLimitsBody(body);
  if (notAnObject(failures)) {
    throw new BadRequestError('The request body must be a JSON object like {"rate_limit_per_second": 20}.', [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  }
  const first = failures.find((f) => f.keyword === 'additionalProperties') ?? failures[0];
  if (first) throw invalid(first.location, first.message);
  return pickLimits(body as Record<string, unknown>);
}

/** The limit fields sent (the schema checked their values). */
function pickLimits(fields: Record<string, unknown>): Partial<KeyLimitFields> {
  const limits: Partial<KeyLimitFields> = {};
  for (const f of LIMIT_FIELDS) if (fields[f] !== undefined) limits[f] = fields[f] as number | null;
  return limits;
}

function keyBody(body: unknown): { name: string; scopes: KeyScope[]; limits: Partial<KeyLimitFields> } {
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
  const normalised = scopes.map((s) => {
    const scope = SCOPES.includes(s as Scope) ? (s as Scope) : resourceScope(s);
    if (scope === undefined) throw invalid('scopes', `scope "${s}" must name the endpoint's or source's id (a UUID)`);
    return scope;
  });
  return { name: name.trim(), scopes: [...new Set(normalised)], limits: pickLimits(body as Record<string, unknown>) };
}

function invalid(location: string, message: string): UnprocessableError {
  return new UnprocessableError(message.charAt(0).toUpperCase() + message.slice(1) + '.', [
    { domain: 'keys', reason: 'invalidValue', message, location },
  ]);
}
