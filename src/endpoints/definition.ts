/**
 * Validation of an endpoint definition posted to the management API (docs/API.md, "Endpoint
 * settings", "Management API"): a JSON object in, complete `EndpointFields` out, or a 422 that
 * names the field and says what to change. The shape of a body is `EndpointBodySchema` (checked by
 * Ajv, and the OpenAPI document's schema); what spans fields or needs the query (warming needs
 * caching, declared and used `@parameters` agree, reserved names) is checked here after it. The
 * SQL itself is checked by the translator in the management service.
 *
 *   validateDefinition({ name: 'errors.count', query: 'select count(*) as n from `postgres.logs`' })
 *   // → { name: 'errors.count', parameters: [], max_rows: 1000, cache_duration_seconds: 0, ... }
 */
import { Type, type Static } from '@sinclair/typebox';
import { compile, MAX_BYTES, NO_NUL, NOT_BLANK, notAnObject, problem, type Check } from '../http/validation.js';
import { BadRequestError, UnprocessableError, type ErrorDetail } from '../errors.js';
import { MAX_NAME_LENGTH, MAX_QUERY_BYTES, NAME_RE, NAME_RULE } from '../inputLimits.js';
import type { EndpointFields, EndpointRecord, ParameterDeclaration } from './repository.js';

const PARAMETER_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_ROWS_LIMIT = 1_000_000;
export const DEFAULT_MAX_ROWS = 1000;
/** A year: longer cache lifetimes or warming periods are mistakes, and the columns are int4. */
export const MAX_SECONDS = 365 * 86_400;
/** The reserved parameter that carries a sandboxed query (docs/API.md, "Query sandboxing"). */
export const RESERVED_PARAMETERS = new Set(['sql']);
const MAX_DESCRIPTION = 10_000;

/** A parameter declaration (docs/API.md, "Endpoint settings"); each problem names `parameters[i]…`. */
export const ParameterDeclarationSchema = Type.Object(
  {
    name: Type.String({
      pattern: PARAMETER_NAME_RE.source,
      description: 'The name after @ in the query.',
      ...problem('invalidParameters', '{location} must be the name used after @ in the query (letters, digits, "_")'),
    }),
    required: Type.Optional(Type.Boolean({ default: false, ...problem('invalidParameters', '{location} must be true or false') })),
    allowed_values: Type.Optional(
      Type.Union([Type.Array(Type.String(), { minItems: 1 }), Type.Null()], {
        description: 'The only values a caller may pass; null for any.',
        ...problem('invalidParameters', '{location} must be null or a non-empty array of strings'),
      }),
    ),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()], problem('invalidParameters', '{location} must be a string'))),
  },
  {
    additionalProperties: false,
    ...problem('invalidParameters', '{location} must be an object {"name", "required", "allowed_values", "description"}', {
      additionalProperties: '{location} has an unknown field "{field}": a parameter has name, required, allowed_values, description',
    }),
  },
);

const ParametersSchema = Type.Array(ParameterDeclarationSchema, {
  description: 'Declared parameters; omitted: every @name of the query, not required.',
  ...problem('invalidParameters', 'parameters must be an array of {"name", "required", "allowed_values", "description"}'),
});

/** Sent back unchanged from a GET (a GET → edit → PUT round trip): accepted and ignored. */
const readOnly = (description: string) => Type.Optional(Type.Unknown({ readOnly: true, description }));

/**
 * The body of `POST /api/endpoints`, `PUT` and `PATCH /api/endpoints/:idOrName` (docs/API.md,
 * "Endpoint settings"). On POST and PUT `name` and `query` are required (`EndpointCreateSchema`).
 */
export const EndpointBodySchema = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        pattern: NAME_RE.source,
        maxLength: MAX_NAME_LENGTH,
        description: 'Unique name, used in URLs.',
        ...problem('invalidName', `name is required: ${NAME_RULE}`),
      }),
    ),
    description: Type.Optional(
      Type.Union([Type.String({ maxLength: MAX_DESCRIPTION, ...NO_NUL }), Type.Null()], {
        default: '',
        ...problem('invalidDescription', `description must be a string of at most ${MAX_DESCRIPTION} characters`),
      }),
    ),
    query: Type.Optional(
      Type.String({
        pattern: NOT_BLANK,
        [MAX_BYTES]: MAX_QUERY_BYTES,
        ...NO_NUL,
        description: 'BigQuery-dialect SQL with @name parameters.',
        ...problem('invalidQuery', "query is required: the endpoint's BigQuery SQL", {
          type: "query is required: the endpoint's BigQuery SQL",
          pattern: "query is required: the endpoint's BigQuery SQL",
          [MAX_BYTES]: `query is longer than ${MAX_QUERY_BYTES / 1024} KB`,
          not: 'query contains the NUL character',
        }),
      }),
    ),
    parameters: Type.Optional(ParametersSchema),
    max_rows: Type.Optional(integer('max_rows', 1, MAX_ROWS_LIMIT, DEFAULT_MAX_ROWS, 'Cap on the rows returned.')),
    cache_duration_seconds: Type.Optional(integer('cache_duration_seconds', 0, MAX_SECONDS, 0, 'Result cache lifetime; 0: no caching.')),
    cache_warming_seconds: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: MAX_SECONDS }), Type.Null()], {
        default: null,
        description: 'Warming period; null: no warming. Needs caching.',
        ...problem('invalidValue', `cache_warming_seconds must be null (no warming) or a whole number from 1 to ${MAX_SECONDS}`),
      }),
    ),
    sandboxable: Type.Optional(boolean('sandboxable', 'Callers may pass their own `sql` over the CTEs.')),
    redact_pii: Type.Optional(boolean('redact_pii', 'Redact IP addresses in every answer.')),
    enable_auth: Type.Optional(
      Type.Boolean({
        default: true,
        description: 'false: a public endpoint, run without a key and limited per client address (docs/API.md, "Public endpoints").',
        ...problem('invalidValue', 'enable_auth must be true or false'),
      }),
    ),
    language: Type.Optional(
      Type.Literal('bq_sql', {
        default: 'bq_sql',
        description: 'The dialect of `query`: BigQuery SQL only.',
        ...problem('invalidLanguage', 'language must be "bq_sql": queries are BigQuery SQL here (ch_sql, pg_sql and lql are not run)'),
      }),
    ),
    labels: Type.Optional(
      Type.Union([Type.String({ maxLength: MAX_DESCRIPTION, ...NO_NUL }), Type.Null()], {
        default: null,
        description: "Free text (the original service's `key=value,…` labels), stored and echoed.",
        ...problem('invalidValue', `labels must be null or a string of at most ${MAX_DESCRIPTION} characters`),
      }),
    ),
    // The original service's names of two of our fields (docs/COMPATIBILITY.md, "Management API").
    max_limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_ROWS_LIMIT,
        description: "The original service's name of max_rows.",
        ...problem('invalidValue', `max_limit must be a whole number from 1 to ${MAX_ROWS_LIMIT}`),
      }),
    ),
    proactive_requerying_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SECONDS,
        description: "The original service's name of cache_warming_seconds; 0, or no caching: no warming.",
        ...problem('invalidValue', `proactive_requerying_seconds must be a whole number from 0 to ${MAX_SECONDS}`),
      }),
    ),
    enable_dynamic_reservation: Type.Optional(
      Type.Boolean({
        description: 'Accepted and ignored (BigQuery slots).',
        ...problem('invalidValue', 'enable_dynamic_reservation must be true or false'),
      }),
    ),
    backend_id: Type.Optional(
      Type.Null({
        description: "Only null: endpoints run on this service's own Postgres.",
        ...problem('invalidBackend', "backend_id must be null: endpoints run on this service's own Postgres"),
      }),
    ),
    id: readOnly('Ignored when sent.'),
    token: readOnly("Ignored when sent (the id, in the original service's name)."),
    source_mapping: readOnly('Ignored when sent: resolved from the query.'),
    version: readOnly('Ignored when sent.'),
    created_at: readOnly('Ignored when sent.'),
    updated_at: readOnly('Ignored when sent.'),
  },
  {
    additionalProperties: false,
    ...problem('unknownField', 'unknown field "{field}"'),
  },
);
/** POST and PUT: the whole definition, so `name` and `query` must be sent. */
export const EndpointCreateSchema = { ...EndpointBodySchema, required: ['name', 'query'] } as typeof EndpointBodySchema;
export type EndpointBody = Static<typeof EndpointBodySchema>;

function integer(field: string, minimum: number, maximum: number, fallback: number, description: string) {
  return Type.Integer({
    minimum,
    maximum,
    default: fallback,
    description,
    ...problem('invalidValue', `${field} must be a whole number from ${minimum} to ${maximum}`),
  });
}

function boolean(field: string, description: string) {
  return Type.Boolean({ default: false, description, ...problem('invalidValue', `${field} must be true or false`) });
}

const checkCreate = compile(EndpointCreateSchema);
const checkPatch = compile(EndpointBodySchema);
const checkDeclarations = compile(Type.Object({ parameters: ParametersSchema }));
const FIELDS = Object.keys(EndpointBodySchema.properties).filter((k) => !EndpointBodySchema.properties[k as keyof EndpointBody].readOnly);

/** The declaration an endpoint read by the query gives a parameter (src/endpoints/nesting.ts). */
export type InheritedDeclaration = (name: string) => ParameterDeclaration | undefined;

/**
 * The body checked against its schema: 400 when it is not an object, 422 naming an unknown field,
 * else every field's problem, thrown by `finish` with the rule that spans two fields. Those of
 * `parameters` are reported by `resolveParameters`, once the query's own `@names` are known.
 */
function checkedBody(input: unknown, check: Check): { body: EndpointBody; problems: ErrorDetail[] } {
  const failures = check(input);
  if (notAnObject(failures)) {
    throw new BadRequestError('The request body must be a JSON object (Content-Type: application/json).', [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  }
  const unknown = failures.filter((f) => f.keyword === 'additionalProperties' && !/[.[]/.test(f.location));
  if (unknown.length) {
    const names = unknown.map((f) => f.location);
    throw invalid(
      names[0],
      `Unknown field${names.length > 1 ? 's' : ''} ${names.map((k) => `"${k}"`).join(', ')}: an endpoint has ${FIELDS.join(', ')}.`,
      'unknownField',
    );
  }
  const problems: ErrorDetail[] = [];
  for (const field of FIELDS) {
    const failure = field === 'parameters' ? undefined : failures.find((f) => f.location === field);
    if (failure) problems.push(detail(field, failure.message, failure.reason));
  }
  return { body: input as EndpointBody, problems };
}

/**
 * Create and PUT: every field from the body, defaults for the rest (docs/API.md, "Endpoint
 * settings").
 * `usedParameters` are the `@names` of the query (from the translator's lexer), including those
 * of the endpoints it reads; `inherited` gives their declarations, the default of an undeclared name.
 */
export function validateDefinition(
  input: unknown,
  usedParameters: (query: string) => string[],
  inherited?: InheritedDeclaration,
): EndpointFields {
  const { body, problems } = checkedBody(input, checkCreate);
  const fields: EndpointFields = {
    name: body.name ?? '',
    description: body.description ?? '',
    query: body.query ?? '',
    parameters: [],
    max_rows: maxRows(body, problems) ?? DEFAULT_MAX_ROWS,
    cache_duration_seconds: body.cache_duration_seconds ?? 0,
    cache_warming_seconds: null,
    sandboxable: body.sandboxable ?? false,
    redact_pii: body.redact_pii ?? false,
    enable_auth: body.enable_auth ?? true,
    language: 'bq_sql',
    labels: body.labels ?? null,
  };
  fields.cache_warming_seconds = warming(body, fields.cache_duration_seconds, problems) ?? null;
  finish(problems, fields);
  fields.parameters = resolveParameters(body.parameters, usedParameters(fields.query), undefined, inherited);
  return fields;
}

/**
 * PATCH: the fields sent replace those of `current`; the result is validated as a whole.
 * When the query changes and `parameters` is not sent, the declarations of names still used
 * are kept and new names are declared, not required.
 */
export function validatePatch(
  current: EndpointRecord,
  input: unknown,
  usedParameters: (query: string) => string[],
  inherited?: InheritedDeclaration,
): EndpointFields {
  const { body, problems } = checkedBody(input, checkPatch);
  const has = (k: keyof EndpointBody) => Object.prototype.hasOwnProperty.call(body, k);
  const fields: EndpointFields = {
    name: has('name') ? (body.name ?? '') : current.name,
    description: has('description') ? (body.description ?? '') : current.description,
    query: has('query') ? (body.query ?? '') : current.query,
    parameters: current.parameters,
    max_rows: maxRows(body, problems) ?? current.max_rows,
    cache_duration_seconds: has('cache_duration_seconds') ? (body.cache_duration_seconds ?? 0) : current.cache_duration_seconds,
    cache_warming_seconds: current.cache_warming_seconds,
    sandboxable: has('sandboxable') ? (body.sandboxable ?? false) : current.sandboxable,
    redact_pii: has('redact_pii') ? (body.redact_pii ?? false) : current.redact_pii,
    enable_auth: has('enable_auth') ? (body.enable_auth ?? true) : current.enable_auth,
    language: 'bq_sql',
    labels: has('labels') ? (body.labels ?? null) : current.labels,
  };
  const warmingSent = warming(body, fields.cache_duration_seconds, problems);
  if (warmingSent !== undefined) fields.cache_warming_seconds = warmingSent;
  finish(problems, fields);
  fields.parameters = resolveParameters(
    has('parameters') ? body.parameters : undefined,
    usedParameters(fields.query),
    current.parameters,
    inherited,
  );
  return fields;
}

/**
 * `max_rows`, or the original service's `max_limit` (docs/COMPATIBILITY.md, "Management API");
 * undefined when neither is sent, a problem when both are sent with different values.
 */
function maxRows(body: EndpointBody, problems: ErrorDetail[]): number | undefined {
  if (body.max_rows !== undefined && body.max_limit !== undefined && body.max_rows !== body.max_limit) {
    problems.push(
      detail('max_limit', 'max_limit is another name of max_rows: send one of them, or both with the same value', 'conflictingFields'),
    );
  }
  return body.max_rows ?? body.max_limit;
}

/**
 * The warming period sent: `cache_warming_seconds` (null: none), or the original service's
 * `proactive_requerying_seconds`, where 0 or an uncached endpoint mean no warming (the original
 * re-runs cached results only, so its defaults, 1800 s with caching off, must not be a 422 here).
 * Undefined when neither is sent.
 */
function warming(body: EndpointBody, cacheSeconds: number, problems: ErrorDetail[]): number | null | undefined {
  const ours = body.cache_warming_seconds;
  const theirs = body.proactive_requerying_seconds;
  if (theirs === undefined || typeof theirs !== 'number') return ours;
  const derived = theirs === 0 || cacheSeconds === 0 ? null : theirs;
  if (ours !== undefined && (ours ?? 0) !== theirs) {
    problems.push(
      detail(
        'proactive_requerying_seconds',
        'proactive_requerying_seconds is another name of cache_warming_seconds: send one of them, or both with the same value',
        'conflictingFields',
      ),
    );
  }
  return ours !== undefined ? ours : derived;
}

/** The rule that spans two fields (warming needs caching), then every problem at once. */
function finish(problems: ErrorDetail[], fields: EndpointFields): void {
  const failed = new Set(problems.map((p) => p.location));
  if (
    !failed.has('cache_warming_seconds') &&
    fields.cache_warming_seconds !== null &&
    (failed.has('cache_duration_seconds') ? 0 : fields.cache_duration_seconds) === 0
  ) {
    problems.push(
      detail(
        'cache_warming_seconds',
        'cache_warming_seconds needs caching: set cache_duration_seconds above 0, or cache_warming_seconds to null',
        'warmingWithoutCache',
      ),
    );
  }
  throwIfAny(problems);
}

/**
 * The declared parameters. Not sent: every used `@name`, not required (keeping the
 * declarations of `previous` for names still used, else taking those of a read endpoint). Sent: each must be well formed, and the
 * declared names must be exactly the used ones.
 */
export function resolveParameters(
  value: unknown,
  used: string[],
  previous: ParameterDeclaration[] | undefined,
  inherited?: InheritedDeclaration,
): ParameterDeclaration[] {
  const reserved = used.filter((n) => RESERVED_PARAMETERS.has(n));
  if (reserved.length)
    throw invalid(
      'query',
      `@${reserved[0]} is reserved for the sandboxed query a caller passes; rename the parameter`,
      'reservedParameter',
    );
  if (value === undefined) {
    return used.map(
      (name) =>
        previous?.find((p) => p.name === name) ?? inherited?.(name) ?? { name, required: false, allowed_values: null, description: '' },
    );
  }
  const failure = checkDeclarations({ parameters: value })[0];
  if (failure) throw invalid(failure.location, failure.message, failure.reason);
  const declared = (value as Static<typeof ParametersSchema>).map((p) => ({
    name: p.name,
    required: p.required ?? false,
    allowed_values: p.allowed_values ?? null,
    description: p.description ?? '',
  }));
  const names = declared.map((p) => p.name);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw invalid(`parameters.${duplicate}`, `parameter "${duplicate}" is declared twice`, 'duplicateParameter');
  const undeclared = used.filter((n) => !names.includes(n));
  if (undeclared.length) {
    throw invalid(
      `parameters.${undeclared[0]}`,
      `the query uses ${undeclared.map((n) => '@' + n).join(', ')} but parameters does not declare ${undeclared.length > 1 ? 'them' : 'it'}`,
      'undeclaredParameter',
    );
  }
  const unused = names.filter((n) => !used.includes(n));
  if (unused.length) {
    throw invalid(
      `parameters.${unused[0]}`,
      `parameters declares ${unused.map((n) => '"' + n + '"').join(', ')} but the query never uses ${unused.map((n) => '@' + n).join(', ')}`,
      'unusedParameter',
    );
  }
  return declared;
}

function detail(location: string, message: string, reason: string): ErrorDetail {
  return { domain: 'endpoint', reason, message, location };
}

function invalid(location: string, message: string, reason: string): UnprocessableError {
  return new UnprocessableError(message.charAt(0).toUpperCase() + message.slice(1) + (message.endsWith('.') ? '' : '.'), [
    detail(location, message, reason),
  ]);
}

function throwIfAny(problems: ErrorDetail[]): void {
  if (!problems.length) return;
  const first = problems[0];
  const message =
    problems.length === 1
      ? `${capitalise(first.message)}.`
      : `The endpoint definition has ${problems.length} problems; the first: ${first.message}.`;
  throw new UnprocessableError(message, problems);
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
