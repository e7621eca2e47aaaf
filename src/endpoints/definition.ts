/**
 * Validation of an endpoint definition posted to the management API (docs/API.md, "Endpoint
 * settings", "Management API"): a JSON object in, complete `EndpointFields` out, or a 422 that
 * names the field and says what to change. The SQL itself is checked by the translator in the
 * management service; here only that the declared and the used `@parameters` agree.
 *
 *   validateDefinition({ name: 'errors.count', query: 'select count(*) as n from `postgres.logs`' })
 *   // → { name: 'errors.count', parameters: [], max_rows: 1000, cache_duration_seconds: 0, ... }
 */
import { BadRequestError, UnprocessableError, type ErrorDetail } from '../errors.js';
import { isValidName, MAX_QUERY_BYTES, NAME_RULE } from '../limits.js';
import type { EndpointFields, EndpointRecord, ParameterDeclaration } from './repository.js';

const PARAMETER_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_ROWS_LIMIT = 1_000_000;
export const DEFAULT_MAX_ROWS = 1000;
/** A year: longer cache lifetimes or warming periods are mistakes, and the columns are int4. */
export const MAX_SECONDS = 365 * 86_400;
/** The reserved parameter that carries a sandboxed query (docs/API.md, "Query sandboxing"). */
export const RESERVED_PARAMETERS = new Set(['sql']);

const FIELDS = [
  'name',
  'description',
  'query',
  'parameters',
  'max_rows',
  'cache_duration_seconds',
  'cache_warming_seconds',
  'sandboxable',
  'redact_pii',
] as const;
/** Fields a client may send back unchanged from a GET (a GET → edit → PUT round trip); ignored. */
const READ_ONLY = new Set(['id', 'version', 'created_at', 'updated_at']);
const DECLARATION_FIELDS = new Set(['name', 'required', 'allowed_values', 'description']);

type Body = Record<string, unknown>;

/** The body must be a JSON object: 400 otherwise (nothing to validate). */
export function requireObject(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestError('The request body must be a JSON object (Content-Type: application/json).', [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  }
  return body as Body;
}

/** The declaration an endpoint read by the query gives a parameter (src/endpoints/nesting.ts). */
export type InheritedDeclaration = (name: string) => ParameterDeclaration | undefined;

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
  const body = requireObject(input);
  rejectUnknownFields(body);
  const problems: ErrorDetail[] = [];
  const name = checkName(body.name, problems);
  const query = checkQuery(body.query, problems);
  const fields = {
    name,
    description: checkDescription(body.description, problems),
    query,
    parameters: [] as ParameterDeclaration[],
    max_rows: checkInteger(body.max_rows, 'max_rows', DEFAULT_MAX_ROWS, 1, MAX_ROWS_LIMIT, problems),
    cache_duration_seconds: checkInteger(body.cache_duration_seconds, 'cache_duration_seconds', 0, 0, MAX_SECONDS, problems),
    cache_warming_seconds: checkWarming(body.cache_warming_seconds, problems),
    sandboxable: checkBoolean(body.sandboxable, 'sandboxable', false, problems),
    redact_pii: checkBoolean(body.redact_pii, 'redact_pii', false, problems),
  };
  checkWarmingNeedsCache(fields, problems);
  throwIfAny(problems);
  fields.parameters = resolveParameters(body.parameters, usedParameters(query), undefined, inherited);
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
  const body = requireObject(input);
  rejectUnknownFields(body);
  const problems: ErrorDetail[] = [];
  const has = (k: string) => Object.prototype.hasOwnProperty.call(body, k);
  const query = has('query') ? checkQuery(body.query, problems) : current.query;
  const fields = {
    name: has('name') ? checkName(body.name, problems) : current.name,
    description: has('description') ? checkDescription(body.description, problems) : current.description,
    query,
    parameters: current.parameters,
    max_rows: has('max_rows') ? checkInteger(body.max_rows, 'max_rows', DEFAULT_MAX_ROWS, 1, MAX_ROWS_LIMIT, problems) : current.max_rows,
    cache_duration_seconds: has('cache_duration_seconds')
      ? checkInteger(body.cache_duration_seconds, 'cache_duration_seconds', 0, 0, MAX_SECONDS, problems)
      : current.cache_duration_seconds,
    cache_warming_seconds: has('cache_warming_seconds')
      ? checkWarming(body.cache_warming_seconds, problems)
      : current.cache_warming_seconds,
    sandboxable: has('sandboxable') ? checkBoolean(body.sandboxable, 'sandboxable', false, problems) : current.sandboxable,
    redact_pii: has('redact_pii') ? checkBoolean(body.redact_pii, 'redact_pii', false, problems) : current.redact_pii,
  };
  checkWarmingNeedsCache(fields, problems);
  throwIfAny(problems);
  fields.parameters = resolveParameters(
    has('parameters') ? body.parameters : undefined,
    usedParameters(query),
    current.parameters,
    inherited,
  );
  return fields;
}

function rejectUnknownFields(body: Body): void {
  const unknown = Object.keys(body).filter((k) => !(FIELDS as readonly string[]).includes(k) && !READ_ONLY.has(k));
  if (unknown.length) {
    throw invalid(
      unknown[0]!,
      `Unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}: an endpoint has ${FIELDS.join(', ')}.`,
      'unknownField',
    );
  }
}

function checkName(value: unknown, problems: ErrorDetail[]): string {
  if (!isValidName(value)) {
    problems.push(detail('name', `name is required: ${NAME_RULE}`, 'invalidName'));
    return '';
  }
  return value;
}

function checkQuery(value: unknown, problems: ErrorDetail[]): string {
  if (typeof value !== 'string' || value.trim() === '') {
    problems.push(detail('query', "query is required: the endpoint's BigQuery SQL", 'invalidQuery'));
    return '';
  }
  if (Buffer.byteLength(value, 'utf8') > MAX_QUERY_BYTES) {
    problems.push(detail('query', `query is longer than ${MAX_QUERY_BYTES / 1024} KB`, 'invalidQuery'));
    return '';
  }
  if (value.includes('\0')) {
    problems.push(detail('query', 'query contains the NUL character', 'invalidQuery'));
    return '';
  }
  return value;
}

function checkDescription(value: unknown, problems: ErrorDetail[]): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string' || value.length > 10_000 || value.includes('\0')) {
    problems.push(detail('description', 'description must be a string of at most 10000 characters', 'invalidDescription'));
    return '';
  }
  return value;
}

function checkInteger(value: unknown, field: string, fallback: number, min: number, max: number, problems: ErrorDetail[]): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    problems.push(detail(field, `${field} must be a whole number from ${min} to ${max}`, 'invalidValue'));
    return fallback;
  }
  return value;
}

function checkWarming(value: unknown, problems: ErrorDetail[]): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_SECONDS) {
    problems.push(
      detail(
        'cache_warming_seconds',
        `cache_warming_seconds must be null (no warming) or a whole number from 1 to ${MAX_SECONDS}`,
        'invalidValue',
      ),
    );
    return null;
  }
  return value;
}

function checkWarmingNeedsCache(
  fields: { cache_duration_seconds: number; cache_warming_seconds: number | null },
  problems: ErrorDetail[],
): void {
  if (fields.cache_warming_seconds !== null && fields.cache_duration_seconds === 0) {
    problems.push(
      detail(
        'cache_warming_seconds',
        'cache_warming_seconds needs caching: set cache_duration_seconds above 0, or cache_warming_seconds to null',
        'warmingWithoutCache',
      ),
    );
  }
}

function checkBoolean(value: unknown, field: string, fallback: boolean, problems: ErrorDetail[]): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    problems.push(detail(field, `${field} must be true or false`, 'invalidValue'));
    return fallback;
  }
  return value;
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
  if (!Array.isArray(value))
    throw invalid(
      'parameters',
      'parameters must be an array of {"name", "required", "allowed_values", "description"}',
      'invalidParameters',
    );
  const declared = value.map((item, i) => checkDeclaration(item, i));
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

function checkDeclaration(item: unknown, index: number): ParameterDeclaration {
  const where = `parameters[${index}]`;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    throw invalid(where, `${where} must be an object {"name", "required", "allowed_values", "description"}`, 'invalidParameters');
  }
  const p = item as Body;
  const extra = Object.keys(p).find((k) => !DECLARATION_FIELDS.has(k));
  if (extra)
    throw invalid(
      `${where}.${extra}`,
      `${where} has an unknown field "${extra}": a parameter has name, required, allowed_values, description`,
      'unknownField',
    );
  if (typeof p.name !== 'string' || !PARAMETER_NAME_RE.test(p.name)) {
    throw invalid(`${where}.name`, `${where}.name must be the name used after @ in the query (letters, digits, "_")`, 'invalidParameters');
  }
  if (p.required !== undefined && typeof p.required !== 'boolean')
    throw invalid(`${where}.required`, `${where}.required must be true or false`, 'invalidParameters');
  let allowed: string[] | null = null;
  if (p.allowed_values !== undefined && p.allowed_values !== null) {
    if (!Array.isArray(p.allowed_values) || p.allowed_values.length === 0 || !p.allowed_values.every((v) => typeof v === 'string')) {
      throw invalid(`${where}.allowed_values`, `${where}.allowed_values must be null or a non-empty array of strings`, 'invalidParameters');
    }
    allowed = p.allowed_values as string[];
  }
  if (p.description !== undefined && p.description !== null && typeof p.description !== 'string') {
    throw invalid(`${where}.description`, `${where}.description must be a string`, 'invalidParameters');
  }
  return {
    name: p.name,
    required: p.required ?? false,
    allowed_values: allowed,
    description: (p.description as string | null | undefined) ?? '',
  };
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
  const first = problems[0]!;
  const message =
    problems.length === 1
      ? `${capitalise(first.message)}.`
      : `The endpoint definition has ${problems.length} problems; the first: ${first.message}.`;
  throw new UnprocessableError(message, problems);
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
