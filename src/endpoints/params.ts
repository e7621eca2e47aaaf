/**
 * Declared parameters of an endpoint, validated before anything runs (the Tinybird model):
 * a required one must be present and non-empty, a value must be one of `allowed_values` when
 * the endpoint lists them. Undeclared parameters are dropped: they never reach the query or
 * the cache key, so junk parameters cannot bust the cache.
 */
import { Type, type TObject, type TOptional, type TString } from '@sinclair/typebox';
import { compile, MAX_BYTES, notAnObject, problem, type Check } from '../http/validation.js';
import { BadRequestError, parameterError } from '../errors.js';
import { MAX_PARAMETER_VALUE_BYTES, MAX_QUERY_BYTES } from '../inputLimits.js';
import type { ParameterDeclaration } from './repository.js';

/** The reserved parameter that carries a caller's sandboxed query. */
export const SANDBOX_PARAM = 'sql';

/** The parameter that carries a caller's LQL on a sandboxable endpoint. */
export const LQL_PARAM = 'lql';

export type ParamValues = Record<string, string>;

/** Query-string or body values: strings, each given once. */
const inputSchema = (where: string) =>
  Type.Record(
    Type.String(),
    Type.String({
      not: { type: 'array' },
      ...problem('invalidParameter', `Parameter "{location}" must be a string ${where}.`, {
        not: `Parameter "{location}" is given more than once ${where}; give it once.`,
      }),
    }),
  );
const checkQueryInput = compile(inputSchema('in the query string'));
const checkBodyInput = compile(inputSchema('in the request body'));

/** Query-string values, and for POST the JSON body; every value must be a string. */
export function collectInput(query: Record<string, unknown>, body: unknown): ParamValues {
  refuse(checkQueryInput(query));
  if (body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0))
    return Object.assign(paramMap(), query);
  const failures = checkBodyInput(body);
  if (notAnObject(failures)) throw new BadRequestError('The request body must be a JSON object of string parameters.');
  refuse(failures);
  return Object.assign(paramMap(), query, body);
}

/**
 * security: parameter maps have no prototype, and are read with Object.hasOwn: a parameter
 * named `toString`, `constructor` or `__proto__` left out of a call found Object's own and
 * answered 500, and `__proto__` sent set the map's prototype (issue 25, finding 5).
 */
function paramMap(): ParamValues {
  return Object.create(null) as ParamValues;
}

function refuse(failures: ReturnType<Check>): void {
  const first = failures[0];
  if (first) throw parameterError(first.location, 'invalidParameter', first.message);
}

/**
 * The schema of an endpoint's parameters, from its declarations: what a run validates and what
 * the OpenAPI document shows (src/api/openapi.ts). A required one must be non-empty; an optional
 * one sent empty is "no value" (docs/API.md, "Parameters") and is not held to `allowed_values`.
 */
export function parametersSchema(declared: readonly ParameterDeclaration[]): TObject {
  const properties: Record<string, TString | TOptional<TString>> = {};
  for (const p of declared) {
    const value = Type.String({
      ...(p.required ? { minLength: 1 } : {}),
      ...(p.allowed_values?.length ? { enum: p.allowed_values } : {}),
      [MAX_BYTES]: MAX_PARAMETER_VALUE_BYTES,
      ...(p.description ? { description: p.description } : {}),
    });
    properties[p.name] = p.required ? value : Type.Optional(value);
  }
  return Type.Object(properties, { additionalProperties: true });
}

/**
 * Compiled parameter schemas: by the declarations array (an endpoint record, held in the query
 * service's cache, keeps its array), and by their text for records loaded again.
 */
const checksOf = new WeakMap<readonly ParameterDeclaration[], Check>();
const checks = new Map<string, Check>();
const MAX_CHECKS = 1000;

function checkOf(declared: readonly ParameterDeclaration[]): Check {
  let check = checksOf.get(declared);
  if (check) return check;
  const key = JSON.stringify(declared);
  check = checks.get(key);
  if (!check) {
    if (checks.size >= MAX_CHECKS) checks.clear();
    check = compile(parametersSchema(declared));
    checks.set(key, check);
  }
  checksOf.set(declared, check);
  return check;
}

/** Declared values only; missing optional ones are absent (bound as NULL). */
export function validateParameters(declared: readonly ParameterDeclaration[], input: ParamValues): ParamValues {
  const values = paramMap();
  const checked = paramMap();
  for (const p of declared) {
    const value = Object.hasOwn(input, p.name) ? input[p.name] : undefined;
    if (value === undefined) continue;
    values[p.name] = value;
    if (value !== '' || p.required) checked[p.name] = value;
  }
  const failures = checkOf(declared)(checked);
  // The first declared parameter that fails, worded as docs/API.md, "Parameters" says.
  for (const p of declared) {
    const failure = failures.find((f) => f.location === p.name);
    if (!failure) continue;
    if (failure.keywords.includes('required') || failure.keywords.includes('minLength')) {
      const allowed = p.allowed_values?.length ? ` (one of: ${p.allowed_values.join(', ')})` : '';
      throw parameterError(p.name, 'missingParameter', `Missing required parameter "${p.name}"${allowed}.`);
    }
    if (failure.keywords.includes(MAX_BYTES)) {
      throw parameterError(p.name, 'invalidParameter', `Parameter "${p.name}" is longer than ${MAX_PARAMETER_VALUE_BYTES} bytes.`);
    }
    throw parameterError(
      p.name,
      'invalidParameter',
      `Parameter "${p.name}" must be one of: ${p.allowed_values!.join(', ')}; got "${checked[p.name].slice(0, 100)}".`,
    );
  }
  return values;
}

/** The caller's sandboxed query (docs/API.md, "Query sandboxing"): a run parameter every sandboxable endpoint takes. */
export const SandboxSqlSchema = Type.String({
  [MAX_BYTES]: MAX_QUERY_BYTES,
  description: "A BigQuery SELECT over the endpoint's CTEs (sandboxable endpoints only); at most 100 KB.",
  ...problem('invalidParameter', `"sql" is longer than the limit of ${MAX_QUERY_BYTES} bytes.`),
});
const checkSandboxSql = compile(Type.Object({ [SANDBOX_PARAM]: SandboxSqlSchema }));
/** The caller's LQL over the endpoint's CTEs (docs/LQL.md, "On endpoints"). */
export const SandboxLqlSchema = Type.String({
  [MAX_BYTES]: MAX_QUERY_BYTES,
  description: "LQL over the endpoint's CTEs, when `sql` is not given (sandboxable endpoints only); at most 100 KB.",
  ...problem('invalidParameter', `"lql" is longer than the limit of ${MAX_QUERY_BYTES} bytes.`),
});
const checkSandboxLql = compile(Type.Object({ [LQL_PARAM]: SandboxLqlSchema }));

/**
 * The caller's LQL (src/lql/, docs/LQL.md) of a sandboxable endpoint, as the original reads
 * `lql`: only where `sql` is not given, and not where the endpoint declares a parameter `lql`.
 * Elsewhere `lql` is an undeclared parameter, dropped like any other.
 */
export function sandboxLqlOf(
  endpoint: { sandboxable: boolean; parameters: readonly ParameterDeclaration[] },
  input: ParamValues,
): string | undefined {
  const lql = input[LQL_PARAM];
  if (!endpoint.sandboxable || lql === undefined || lql.trim() === '' || endpoint.parameters.some((p) => p.name === LQL_PARAM))
    return undefined;
  refuse(checkSandboxLql({ [LQL_PARAM]: lql }));
  return lql;
}

export function sandboxSqlOf(input: ParamValues): string | undefined {
  const sql = Object.hasOwn(input, SANDBOX_PARAM) ? input[SANDBOX_PARAM] : undefined;
  if (sql === undefined || sql.trim() === '') return undefined;
  refuse(checkSandboxSql({ [SANDBOX_PARAM]: sql }));
  return sql;
}
