/**
 * Declared parameters of an endpoint, validated before anything runs (the Tinybird model):
 * a required one must be present and non-empty, a value must be one of `allowed_values` when
 * the endpoint lists them. Undeclared parameters are dropped: they never reach the query or
 * the cache key, so junk parameters cannot bust the cache.
 */
import { BadRequestError, parameterError } from '../errors.js';
import { MAX_PARAMETER_VALUE_BYTES, MAX_QUERY_BYTES } from '../limits.js';
import type { ParameterDeclaration } from './repository.js';

/** The reserved parameter that carries a caller's sandboxed query. */
export const SANDBOX_PARAM = 'sql';

export type ParamValues = Record<string, string>;

/** Query-string values, and for POST the JSON body; every value must be a string. */
export function collectInput(query: Record<string, unknown>, body: unknown): ParamValues {
  const out: ParamValues = {};
  const take = (source: Record<string, unknown>, where: string) => {
    for (const [name, value] of Object.entries(source)) {
      if (Array.isArray(value))
        throw parameterError(name, 'invalidParameter', `Parameter "${name}" is given more than once ${where}; give it once.`);
      if (typeof value !== 'string') throw parameterError(name, 'invalidParameter', `Parameter "${name}" must be a string ${where}.`);
      out[name] = value;
    }
  };
  take(query, 'in the query string');
  if (body !== undefined && body !== null && !(typeof body === 'object' && Object.keys(body).length === 0)) {
    if (typeof body !== 'object' || Array.isArray(body))
      throw new BadRequestError('The request body must be a JSON object of string parameters.');
    take(body as Record<string, unknown>, 'in the request body');
  }
  return out;
}

/** Declared values only; missing optional ones are absent (bound as NULL). */
export function validateParameters(declared: readonly ParameterDeclaration[], input: ParamValues): ParamValues {
  const values: ParamValues = {};
  for (const p of declared) {
    const value = input[p.name];
    if (value === undefined || value === '') {
      if (p.required) {
        const allowed = p.allowed_values?.length ? ` (one of: ${p.allowed_values.join(', ')})` : '';
        throw parameterError(p.name, 'missingParameter', `Missing required parameter "${p.name}"${allowed}.`);
      }
      if (value === '') values[p.name] = value;
      continue;
    }
    if (Buffer.byteLength(value) > MAX_PARAMETER_VALUE_BYTES) {
      throw parameterError(p.name, 'invalidParameter', `Parameter "${p.name}" is longer than ${MAX_PARAMETER_VALUE_BYTES} bytes.`);
    }
    if (p.allowed_values?.length && !p.allowed_values.includes(value)) {
      throw parameterError(
        p.name,
        'invalidParameter',
        `Parameter "${p.name}" must be one of: ${p.allowed_values.join(', ')}; got "${value.slice(0, 100)}".`,
      );
    }
    values[p.name] = value;
  }
  return values;
}

export function sandboxSqlOf(input: ParamValues): string | undefined {
  const sql = input[SANDBOX_PARAM];
  if (sql === undefined || sql.trim() === '') return undefined;
  if (Buffer.byteLength(sql) > MAX_QUERY_BYTES) {
    throw parameterError(SANDBOX_PARAM, 'invalidParameter', `"sql" is longer than the limit of ${MAX_QUERY_BYTES} bytes.`);
  }
  return sql;
}
