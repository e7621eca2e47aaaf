/**
 * Type conversions with BigQuery semantics, shared by the resolver and the function table.
 * Time values are always interpreted in UTC, whatever the session TimeZone.
 */
import { SqlSyntaxError, SqlUnsupportedError } from './errors.js';
import { parseRangeText } from './rangeText.js';
import type { CastType } from './ast/expressions.js';
import { pg, type PgExpr, type PgTypeName } from './postgres/ast.js';
import { isNumeric, isScalar, rangeElement, scalar, typed, type BqType, type RangeElement, type ScalarName, type Typed } from './types.js';

/**
 * A time string names its zone when it ends in Z or an offset right after the time, or in a zone
 * name (`… UTC`). Kept short: logs.all prints it once per optional bound and CTE.
 */
const HAS_ZONE = '(:[0-9]{2}(\\.[0-9]*)? *([zZ]|[+-][0-9:]+)|[A-Za-z]) *$';
const HAS_ZONE_RE = new RegExp(HAS_ZONE);

const PG_TYPES: Readonly<Record<CastType, PgTypeName>> = {
  INT64: 'bigint',
  FLOAT64: 'float8',
  NUMERIC: 'numeric',
  BOOL: 'boolean',
  STRING: 'text',
  BYTES: 'bytea',
  TIMESTAMP: 'timestamptz',
  DATETIME: 'timestamp',
  DATE: 'date',
  TIME: 'time',
  'RANGE<DATE>': 'daterange',
  'RANGE<DATETIME>': 'tsrange',
  'RANGE<TIMESTAMP>': 'tstzrange',
};

/** Strings that SAFE_CAST accepts before casting; anything else becomes NULL instead of an error. */
const SAFE_PATTERNS: Partial<Record<CastType, string>> = {
  INT64: '^\\s*[+-]?([0-9]{1,19}|0x[0-9a-f]{1,16})\\s*$',
  FLOAT64: '^\\s*[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*$|^\\s*[+-]?(inf|infinity|nan)\\s*$',
  NUMERIC: '^\\s*[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*$',
  BOOL: '^\\s*(true|false)\\s*$',
  TIMESTAMP:
    '^\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ Tt][0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?)?\\s*([zZ]|[+-][0-9]{1,2}(:?[0-9]{2})?|\\s*UTC)?\\s*$',
  DATETIME: '^\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([ Tt][0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,6})?)?)?\\s*$',
  DATE: '^\\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\\s*$',
  TIME: '^\\s*([01]?[0-9]|2[0-3]):[0-5]?[0-9]:[0-5]?[0-9](\\.[0-9]{1,6})?\\s*$',
};

/**
 * `logs.bq_timestamp(text)` (migrations/1763780002000_timestamp-parameter-function.js): the rule
 * below as an IMMUTABLE function, so that the planner folds it for a bound parameter and prunes
 * partitions when it plans a window bound, not only when the executor starts (BENCHMARKS.md).
 */
export const TIMESTAMP_FUNCTION = 'logs.bq_timestamp';

/**
 * `logs.bq_json(text)` (migrations/1763780003000_json-text-function.js): text as jsonb, NULL when it
 * does not parse, as BigQuery's JSON functions answer.
 */
export const JSON_FUNCTION = 'logs.bq_json';

/** A string read as a TIMESTAMP: UTC unless the text names its zone (BigQuery's rule). */
export function stringToTimestamp(s: Typed): PgExpr {
  if (s.literal !== undefined) {
    return HAS_ZONE_RE.test(s.literal) ? pg.cast(s.sql, 'timestamptz') : pg.atUtc(pg.cast(s.sql, 'timestamp'));
  }
  // Only for a parameter: a constant at plan time. On a column the function (not inlined,
  // because it is declared IMMUTABLE over STABLE casts) would cost a call per row.
  if (s.param) return pg.func(TIMESTAMP_FUNCTION, [s.sql]);
  return pg.case(
    [{ when: pg.op('~', s.sql, pg.literal(HAS_ZONE)), then: pg.cast(s.sql, 'timestamptz') }],
    pg.atUtc(pg.cast(s.sql, 'timestamp')),
  );
}

/**
 * The casts BigQuery allows, by source type (its conversion rules); STRING and NULL cast to
 * anything. Anything else is refused here, as BigQuery refuses it, rather than handed to Postgres.
 */
const CASTS_FROM: Partial<Record<ScalarName, readonly CastType[]>> = {
  INT64: ['INT64', 'FLOAT64', 'NUMERIC', 'BOOL', 'STRING'],
  FLOAT64: ['INT64', 'FLOAT64', 'NUMERIC', 'STRING'],
  NUMERIC: ['INT64', 'FLOAT64', 'NUMERIC', 'STRING'],
  BOOL: ['INT64', 'BOOL', 'STRING'],
  TIMESTAMP: ['STRING', 'DATE', 'DATETIME', 'TIME', 'TIMESTAMP'],
  DATETIME: ['STRING', 'DATE', 'DATETIME', 'TIME', 'TIMESTAMP'],
  DATE: ['STRING', 'DATE', 'DATETIME', 'TIMESTAMP'],
  TIME: ['STRING', 'TIME'],
  JSON: [],
  INTERVAL: ['STRING'],
  BYTES: ['BYTES', 'STRING'],
  // A RANGE casts to STRING and from STRING only (BigQuery's "CAST AS RANGE").
  'RANGE<DATE>': ['STRING', 'RANGE<DATE>'],
  'RANGE<DATETIME>': ['STRING', 'RANGE<DATETIME>'],
  'RANGE<TIMESTAMP>': ['STRING', 'RANGE<TIMESTAMP>'],
};

/** CAST / SAFE_CAST. */
export function castTo(value: Typed, target: CastType, safe: boolean, text: string, pos: number): Typed {
  const to = scalar(target);
  const from = value.type;
  if (from.kind !== 'scalar')
    throw new SqlUnsupportedError(`cannot CAST a ${from.kind === 'record' ? 'STRUCT' : 'ARRAY'} to ${target}`, text, pos);
  if (from.name === target) return typed(value.sql, to);
  const allowed = from.loose || value.param ? undefined : CASTS_FROM[from.name];
  if (allowed && !allowed.includes(target)) throw new SqlSyntaxError(`invalid cast from ${from.name} to ${target}`, text, pos);
  const element = rangeElement(to);
  if (element && from.name === 'NULL') return typed(pg.cast(value.sql, PG_TYPES[target]), to);
  if (element) return typed(stringToRange(value, element, safe, text, pos), to);
  const converted = convert(value, from.name, target);
  if (!safe || from.name !== 'STRING' || !SAFE_PATTERNS[target]) return typed(converted, to);
  // Postgres 15 has no non-throwing cast: the text's shape is checked first (Postgres reads more
  // shapes than BigQuery), then a function that answers NULL for what still does not convert
  // ('2020-13-45'), where there is one.
  const safeFunction = SAFE_FUNCTIONS[target];
  const checked = safeFunction ? pg.func(safeFunction, [value.sql]) : converted;
  // A literal is checked here: Postgres casts an untyped literal while parsing, even in a branch never taken.
  if (value.literal !== undefined)
    return typed(safeRegExp(target).test(value.literal) ? checked : pg.cast(pg.literal(null), PG_TYPES[target]), to);
  return typed(pg.case([{ when: pg.op('~*', value.sql, pg.literal(SAFE_PATTERNS[target])), then: checked }]), to);
}

/**
 * SAFE_CAST from STRING by functions of migrations/1764100000000_bigquery-string-functions.js that
 * answer NULL where the cast raises; BOOL needs none (its pattern admits only `true` / `false`).
 */
export const SAFE_FUNCTIONS: Partial<Record<CastType, string>> = {
  INT64: 'logs.bq_safe_int64',
  FLOAT64: 'logs.bq_safe_float64',
  NUMERIC: 'logs.bq_safe_numeric',
  DATE: 'logs.bq_safe_date',
  DATETIME: 'logs.bq_safe_datetime',
  TIMESTAMP: 'logs.bq_safe_timestamp',
};

/** CAST(STRING AS INT64) with BigQuery's hexadecimal form (`'0x123'` is 291): a function of the migration. */
export const INT64_FUNCTION = 'logs.bq_int64';

/** A hexadecimal INT64 literal's value (`'-0x1F'` → -31), computed here; undefined for any other text. */
function hexLiteral(text: string): bigint | undefined {
  const m = /^\s*([+-]?)0x([0-9a-f]{1,16})\s*$/i.exec(text);
  if (!m) return undefined;
  const n = BigInt.asIntN(64, BigInt(`0x${m[2]}`));
  return m[1] === '-' ? -n : n;
}

/** SAFE_PATTERNS compiled once per target, for literals checked at translation time. */
const SAFE_REGEXPS = new Map<CastType, RegExp>();
function safeRegExp(target: CastType): RegExp {
  let re = SAFE_REGEXPS.get(target);
  if (!re) SAFE_REGEXPS.set(target, (re = new RegExp(SAFE_PATTERNS[target]!, 'i')));
  return re;
}

/**
 * `logs.bq_range(lower, upper, safe)` and `logs.bq_parse_range(text, safe, kind)`
 * (migrations/1764880000000_bigquery-range-functions.js): RANGE(…) with BigQuery's check of the
 * bounds, and a range's text read when the query runs.
 */
export const RANGE_FUNCTION = 'logs.bq_range';
export const PARSE_RANGE_FUNCTION = 'logs.bq_parse_range';

/** The Postgres type of a RANGE's bounds. */
export const RANGE_BOUND_TYPES: Readonly<Record<RangeElement, PgTypeName>> = {
  DATE: 'date',
  DATETIME: 'timestamp',
  TIMESTAMP: 'timestamptz',
};

/**
 * A STRING read as a RANGE<element>, BigQuery's literal form: a string literal is read here (text
 * BigQuery refuses is a 400 naming it, NULL under SAFE_CAST), any other text when the query runs.
 */
export function stringToRange(value: Typed, element: RangeElement, safe: boolean, text: string, pos: number): PgExpr {
  const rangeType = PG_TYPES[`RANGE<${element}>`];
  if (value.literal === undefined) {
    return pg.func(PARSE_RANGE_FUNCTION, [value.sql, pg.literal(safe), pg.cast(pg.literal(null), RANGE_BOUND_TYPES[element])]);
  }
  const bounds = parseRangeText(value.literal, element);
  if ('error' in bounds) {
    if (safe) return pg.cast(pg.literal(null), rangeType);
    throw new SqlSyntaxError(`invalid RANGE<${element}> literal '${value.literal}': ${bounds.error}`, text, pos);
  }
  const bound = (b: string | null): PgExpr => {
    if (b === null) return pg.cast(pg.literal(null), RANGE_BOUND_TYPES[element]);
    if (element === 'TIMESTAMP') return stringToTimestamp(typed(pg.literal(b), scalar('STRING'), { literal: b }));
    return pg.cast(pg.literal(b), RANGE_BOUND_TYPES[element]);
  };
  return pg.func(RANGE_FUNCTION, [bound(bounds.lower), bound(bounds.upper), pg.literal(safe)]);
}

/** A RANGE as BigQuery writes it: `[2020-01-01, UNBOUNDED)`, each bound as CAST(bound AS STRING). */
export function rangeToString(range: PgExpr, element: RangeElement): PgExpr {
  const bound = (name: 'lower' | 'upper'): PgExpr =>
    pg.func('coalesce', [convert(typed(pg.func(name, [range]), scalar(element)), element, 'STRING'), pg.literal('UNBOUNDED')]);
  const joined = [pg.literal('['), bound('lower'), pg.literal(', '), bound('upper'), pg.literal(')')].reduce((a, b) => pg.op('||', a, b));
  return pg.case([{ when: pg.is(range, 'NULL', true), then: joined }]);
}

function convert(value: Typed, from: ScalarName, target: CastType): PgExpr {
  const v = value.sql;
  const element = rangeElement(scalar(from));
  if (element && target === 'STRING') return rangeToString(v, element);
  switch (target) {
    case 'TIMESTAMP':
      if (from === 'STRING') return stringToTimestamp(value);
      if (from === 'DATETIME') return pg.atUtc(v);
      if (from === 'DATE') return pg.atUtc(pg.cast(v, 'timestamp'));
      break;
    case 'DATETIME':
      if (from === 'TIMESTAMP') return pg.atUtc(v);
      break;
    case 'DATE':
      if (from === 'TIMESTAMP') return pg.cast(pg.atUtc(v), 'date');
      break;
    case 'TIME':
      // A TIMESTAMP's time of day in UTC.
      if (from === 'TIMESTAMP') return pg.cast(pg.atUtc(v), 'time');
      break;
    case 'INT64':
      if (from === 'STRING') {
        const hex = value.literal === undefined ? undefined : hexLiteral(value.literal);
        if (hex !== undefined) return pg.cast(pg.number(String(hex)), 'bigint');
        if (value.literal === undefined) return pg.func(INT64_FUNCTION, [v]);
      }
      // BigQuery rounds half away from zero; Postgres' float → bigint rounds half to even. numeric rounds like BigQuery.
      if (from === 'FLOAT64' || from === 'NUMERIC') return pg.cast(pg.func('round', [pg.cast(v, 'numeric')]), 'bigint');
      // Postgres casts boolean to integer only.
      if (from === 'BOOL') return pg.cast(pg.cast(v, 'integer'), 'bigint');
      break;
    case 'BOOL':
      // BigQuery: any non-zero integer is TRUE; Postgres casts only integer (not bigint) to boolean.
      if (from === 'INT64') return pg.op('<>', v, pg.number('0'));
      break;
    case 'BYTES':
      // BigQuery's STRING is UTF-8 text; its BYTES are those bytes.
      if (from === 'STRING') return pg.func('convert_to', [v, pg.literal('UTF8')]);
      break;
    case 'STRING':
      // Bytes that are not UTF-8 are an error, as in BigQuery.
      if (from === 'BYTES') return pg.func('convert_from', [v, pg.literal('UTF8')]);
      if (from === 'TIMESTAMP') {
        const text = pg.func('to_char', [pg.atUtc(v), pg.literal('YYYY-MM-DD HH24:MI:SS.US')]);
        return pg.op('||', pg.func('regexp_replace', [text, pg.literal('\\.?0+$'), pg.literal('')]), pg.literal('+00'));
      }
      if (from === 'DATETIME')
        return pg.func('regexp_replace', [
          pg.func('to_char', [v, pg.literal('YYYY-MM-DD HH24:MI:SS.US')]),
          pg.literal('\\.?0+$'),
          pg.literal(''),
        ]);
      break;
  }
  return pg.cast(v, PG_TYPES[target]);
}

/** Gives a text parameter or a schema-less JSON leaf the type of what it meets. */
export function adapt(value: Typed, other: BqType): Typed {
  if (!(value.param || (value.type.kind === 'scalar' && value.type.loose)) || other.kind !== 'scalar') return value;
  if (other.name === 'STRING' || other.name === 'NULL') return value;
  if (other.name === 'TIMESTAMP') return typed(stringToTimestamp(value), other);
  if (other.name === 'INTERVAL' || other.name === 'JSON') return value;
  const element = rangeElement(other);
  if (element) return typed(stringToRange(value, element, false, '', 0), other);
  const target: PgTypeName = isNumeric(other)
    ? value.param
      ? PG_TYPES[other.name as CastType]
      : 'numeric'
    : PG_TYPES[other.name as CastType];
  return typed(pg.cast(value.sql, target), other);
}

/** Both sides of a comparison brought to one type: strings against timestamps become timestamps, and so on. */
export function unify(a: Typed, b: Typed, text = '', pos = 0): [Typed, Typed] {
  let left = adapt(a, b.type);
  let right = adapt(b, a.type);
  if (isScalar(left.type, 'TIMESTAMP') && isScalar(right.type, 'STRING')) right = typed(stringToTimestamp(right), left.type);
  else if (isScalar(right.type, 'TIMESTAMP') && isScalar(left.type, 'STRING')) left = typed(stringToTimestamp(left), right.type);
  else if (isScalar(left.type, 'DATETIME', 'DATE', 'TIME') && isScalar(right.type, 'STRING'))
    right = typed(convert(right, 'STRING', (left.type as { name: CastType }).name), left.type);
  else if (isScalar(right.type, 'DATETIME', 'DATE', 'TIME') && isScalar(left.type, 'STRING'))
    left = typed(convert(left, 'STRING', (right.type as { name: CastType }).name), right.type);
  // A string literal meeting a RANGE is read as one (a STRING column is refused by `compared`).
  else if (rangeElement(left.type) && right.literal !== undefined && isScalar(right.type, 'STRING'))
    right = typed(stringToRange(right, rangeElement(left.type)!, false, text, pos), left.type);
  else if (rangeElement(right.type) && left.literal !== undefined && isScalar(left.type, 'STRING'))
    left = typed(stringToRange(left, rangeElement(right.type)!, false, text, pos), right.type);
  return [left, right];
}

/** What BigQuery compares with what: values of two different groups have no comparison operator. */
const COMPARISON_GROUPS: Partial<Record<ScalarName, string>> = {
  INT64: 'number',
  FLOAT64: 'number',
  NUMERIC: 'number',
  STRING: 'string',
  BYTES: 'bytes',
  BOOL: 'bool',
  TIMESTAMP: 'time',
  DATETIME: 'time',
  DATE: 'time',
  TIME: 'time of day',
  INTERVAL: 'interval',
  JSON: 'json',
  'RANGE<DATE>': 'range of dates',
  'RANGE<DATETIME>': 'range of datetimes',
  'RANGE<TIMESTAMP>': 'range of timestamps',
};

/**
 * Two operands of a comparison (`=`, `<`, BETWEEN, IN, `CASE x WHEN`, NULLIF) brought to one type
 * by `unify`; throws when BigQuery has no comparison for them, e.g. a STRING field with a number
 * (`val > 5`), which Postgres would otherwise refuse at run time ("operator does not exist: text
 * > integer"). Untyped leaves, parameters, NULL and string literals (which Postgres reads as the
 * other side's type) are left to adapt.
 */
export function compared(a: Typed, b: Typed, op: string, text: string, pos: number): [Typed, Typed] {
  const pair = unify(a, b, text, pos);
  // BigQuery defines no comparison of JSON values (read a value out with JSON_VALUE, INT64, …).
  if (pair.some((v) => isScalar(v.type, 'JSON')))
    throw new SqlSyntaxError(
      `no operator ${op} for ${typeLabel(pair[0].type)} and ${typeLabel(pair[1].type)}; compare values read out of the JSON`,
      text,
      pos,
    );
  const groupA = comparisonGroup(pair[0]);
  const groupB = comparisonGroup(pair[1]);
  if (groupA && groupB && groupA !== groupB) {
    throw new SqlSyntaxError(`no operator ${op} for ${typeLabel(pair[0].type)} and ${typeLabel(pair[1].type)}; CAST one side`, text, pos);
  }
  return pair;
}

function comparisonGroup(v: Typed): string | undefined {
  if (v.type.kind !== 'scalar') return 'composite';
  if (v.param || v.type.loose || v.literal !== undefined) return undefined;
  return COMPARISON_GROUPS[v.type.name];
}

function typeLabel(t: BqType): string {
  return t.kind === 'scalar' ? t.name : t.kind === 'record' ? 'STRUCT' : 'ARRAY';
}

/** A value used where BigQuery wants STRING (concat, LIKE, regexp): other scalars are cast to text. */
export function asText(value: Typed): PgExpr {
  if (value.type.kind === 'scalar' && (value.type.name === 'STRING' || value.type.name === 'NULL')) return value.sql;
  if (value.type.kind === 'scalar') return convert(value, value.type.name, 'STRING');
  return pg.cast(value.sql, 'text');
}

/** A value used as a TIMESTAMP (time functions accept strings too). */
export function asTimestamp(value: Typed): PgExpr {
  if (isScalar(value.type, 'STRING')) return stringToTimestamp(value);
  if (isScalar(value.type, 'DATETIME')) return pg.atUtc(value.sql);
  if (isScalar(value.type, 'DATE')) return pg.atUtc(pg.cast(value.sql, 'timestamp'));
  return value.sql;
}

/** JSON text (a leaf, or an element of jsonb_array_elements_text) as a value of a scalar type. */
export function fromJsonText(text: PgExpr, type: BqType): Typed {
  if (type.kind !== 'scalar' || type.name === 'STRING') return typed(text, type.kind === 'scalar' ? type : scalar('STRING'));
  // Time strings are read as UTC, like any string cast to TIMESTAMP.
  if (type.name === 'TIMESTAMP') return typed(stringToTimestamp(typed(text, scalar('STRING'))), type);
  return typed(pg.cast(text, pgTypeOf(type)), type);
}

/** A value used as a number: a text parameter or untyped leaf becomes INT64. */
export function asNumber(value: Typed): PgExpr {
  return adapt(value, scalar('INT64')).sql;
}

/** The Postgres type that holds a BigQuery type; used to cast JSON leaves and NULLs. */
export function pgTypeOf(t: BqType): PgTypeName {
  if (t.kind !== 'scalar') return 'jsonb';
  if (t.name === 'NULL') return 'text';
  if (t.name === 'INTERVAL') return 'interval';
  if (t.name === 'JSON') return 'text';
  return PG_TYPES[t.name];
}

/** The type of the first value that is not NULL (COALESCE, IF, CASE). */
export function commonType(values: readonly Typed[]): BqType {
  return values.find((v) => !isScalar(v.type, 'NULL'))?.type ?? scalar('NULL');
}

/** Values meeting in one result (COALESCE, CASE branches) brought to the type of the first well-typed one. */
export function unifyAll(values: readonly Typed[], text = '', pos = 0): Typed[] {
  const anchor = values.find((v) => !v.param && !(v.type.kind === 'scalar' && (v.type.loose || v.type.name === 'NULL'))) ?? values[0];
  return values.map((v) => (v === anchor ? v : unify(anchor, v, text, pos)[1]));
}
