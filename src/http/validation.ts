/**
 * Request validation from JSON Schemas (TypeBox builds them, Ajv checks them). The same schemas
 * are the request bodies of the OpenAPI document (src/api/openapi.ts), so what is documented is
 * what is enforced.
 *
 * A schema says what to tell the caller when a value fails it with the annotation `x-problem`
 * (`problem(reason, message)`): the `reason` and `message` of an entry of the error envelope
 * (docs/API.md, "Errors"). Ajv finds what is wrong; the nearest annotation on the way from the root
 * schema to the failing keyword says how to word it. `{location}` in a message is the failing
 * value's place (`parameters[0].name`), `{field}` the unknown or missing field.
 *
 *   const check = compile(Type.Object({ n: Type.Integer(problem('invalidValue', 'n must be whole')) }));
 *   check({ n: 1.5 }) // → [{ location: 'n', reason: 'invalidValue', message: 'n must be whole', keyword: 'type' }]
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';

export const PROBLEM = 'x-problem';
/** A string's size in UTF-8 bytes, at most this (JSON Schema's maxLength counts characters). */
export const MAX_BYTES = 'x-max-bytes';

export interface ProblemAnnotation {
  reason: string;
  message: string;
  /** A message of its own for a failing keyword, taken in this order before `message`. */
  byKeyword?: Record<string, string>;
}

/** One failure, worded for the error envelope. */
export interface Failure {
  location: string;
  reason: string;
  message: string;
  /** The keyword the message words (the first that failed, or the one `byKeyword` chose). */
  keyword: string;
  /** Every keyword that failed at this place. */
  keywords: string[];
}

/** Schema options that word the failure of the value they describe. */
export function problem(reason: string, message: string, byKeyword?: Record<string, string>): { [PROBLEM]: ProblemAnnotation } {
  return { [PROBLEM]: byKeyword ? { reason, message, byKeyword } : { reason, message } };
}

/** A string holds no NUL (Postgres text cannot store it). */
export const NO_NUL = { not: { type: 'string', pattern: '\\u0000' } } as const;
/** A string holds something other than white space. */
export const NOT_BLANK = '\\S';

export const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false, allowUnionTypes: true });
ajv.addKeyword({ keyword: PROBLEM, schemaType: 'object' });
ajv.addKeyword({
  keyword: MAX_BYTES,
  type: 'string',
  schemaType: 'number',
  errors: false,
  validate: (max: number, data: string) => Buffer.byteLength(data, 'utf8') <= max,
});

export type Check = (value: unknown) => Failure[];

/** A body that is not a JSON object fails its schema at the root on `type`: a 400, not a 422. */
export function notAnObject(failures: Failure[]): boolean {
  return failures.some((f) => f.location === '' && f.keyword === 'type');
}

/** A checker of `schema`: the failures of a value, in the order of the schema's fields, one per place. */
export function compile(schema: TSchema): Check {
  const validate: ValidateFunction = ajv.compile(schema);
  return (value) => {
    if (validate(value)) return [];
    return failuresOf(schema, validate.errors ?? []);
  };
}

function failuresOf(root: TSchema, errors: ErrorObject[]): Failure[] {
  const byLocation = new Map<string, { at: string; annotation: ProblemAnnotation | undefined; keywords: string[]; field: string }>();
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'if') continue; // its branches' errors say more
    const { annotation, at, location, field } = placeOf(root, error);
    const entry = byLocation.get(location);
    if (entry) entry.keywords.push(error.keyword);
    else byLocation.set(location, { at, annotation, keywords: [error.keyword], field });
  }
  return [...byLocation].map(([location, { at, annotation, keywords, field }]) => {
    const chosen = annotation?.byKeyword && Object.keys(annotation.byKeyword).find((k) => keywords.includes(k));
    const template = chosen ? annotation.byKeyword![chosen] : (annotation?.message ?? `${at || 'the body'} is invalid`);
    return {
      location,
      keyword: chosen || keywords[0],
      keywords,
      reason: annotation?.reason ?? 'invalidValue',
      message: template.replaceAll('{location}', at).replaceAll('{field}', field),
    };
  });
}

/**
 * Where an error is reported: at the value of the nearest `x-problem` on its schema path (a
 * failing item of `allowed_values` is a problem of `allowed_values`), with the field appended for
 * an unknown one. A missing property is worded by the property's own schema.
 */
function placeOf(root: TSchema, error: ErrorObject): { annotation?: ProblemAnnotation; at: string; location: string; field: string } {
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const instance = error.instancePath.split('/').slice(1).map(unescape);
  const schemaPath = error.schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean).map(unescape).slice(0, -1);
  if (params.missingProperty !== undefined) {
    schemaPath.push('properties', params.missingProperty);
    instance.push(params.missingProperty);
  }
  let node = root as Record<string, unknown> | undefined;
  let annotation = node?.[PROBLEM] as ProblemAnnotation | undefined;
  let depth = 0;
  let annotatedDepth = 0;
  for (let i = 0; i < schemaPath.length && node; i++) {
    const segment = schemaPath[i];
    if (segment === 'properties' || segment === 'anyOf' || segment === 'allOf' || segment === 'oneOf') {
      node = (node[segment] as Record<string, Record<string, unknown>>)?.[schemaPath[++i]];
      if (segment === 'properties') depth++;
    } else {
      node = node[segment] as Record<string, unknown> | undefined;
      if (segment === 'items' || segment === 'additionalProperties') depth++;
    }
    if (node && typeof node === 'object' && PROBLEM in node) {
      annotation = node[PROBLEM] as ProblemAnnotation;
      annotatedDepth = depth;
    }
  }
  // Without any annotation the failing value's own place.
  const at = placeName(annotation ? instance.slice(0, annotatedDepth) : instance);
  const field = params.additionalProperty ?? params.missingProperty ?? '';
  const location = params.additionalProperty !== undefined ? (at ? `${at}.${field}` : field) : at;
  return { annotation, at, location, field };
}

/** `['parameters', '0', 'name']` → `parameters[0].name`. */
function placeName(segments: string[]): string {
  return segments.reduce((out, s) => (/^\d+$/.test(s) ? `${out}[${s}]` : out ? `${out}.${s}` : s), '');
}

function unescape(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}
