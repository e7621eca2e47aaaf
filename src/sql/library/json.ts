/**
 * JSON functions over JSON-formatted strings and over records (`metadata`, STRUCTs), answered as
 * BigQuery answers them for a JSON-formatted STRING: text that is not JSON reads as NULL, a JSON
 * `null` selected by JSON_QUERY is SQL NULL, and JSON comes back compact (`{"a":1}`), rendered by
 * `logs.bq_json_text` (migrations/1764200000000_bigquery-library-functions.js). Objects keep
 * jsonb's key order (shorter keys first), not the input's (docs/COMPATIBILITY.md).
 *
 * BigQuery's JSON type (`JSON '…'`, PARSE_JSON, TO_JSON, JSON_SET, …) is held as its text,
 * rendered by `logs.bq_json_render` (migrations/1764820000000_bigquery-json-time-functions.js):
 * compact, keys sorted as BigQuery keeps them, numbers as BigQuery holds them. A JSON column of an
 * answer is that text, as BigQuery's API sends a JSON value. Operations read it back as jsonb.
 */
import { JSON_FUNCTION, asText, asTimestamp, pgTypeOf } from '../coerce.js';
import { SqlSyntaxError, SqlUnsupportedError } from '../errors.js';
import type { CallSite, Emits, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL, PARTIAL_STRICT, SCALAR, TOTAL, TOTAL_STRICT, scalar as scalarFacts } from '../postgres/facts.js';
import {
  BOOL,
  FLOAT64,
  INT64,
  JSON_TYPE,
  STRING,
  isScalar,
  rangeElement,
  scalar,
  typeName,
  typed,
  type BqType,
  type Typed,
} from '../types.js';
import { def, defWith, wrongType } from './define.js';

export const JSON_TEXT = 'logs.bq_json_text';
/** BigQuery's JSON type as text: compact, keys sorted (migrations/1764820000000_bigquery-json-time-functions.js). */
export const JSON_RENDER = 'logs.bq_json_render';
const JSON_ARRAY = 'logs.bq_json_array';
const JSON_SCALAR_ARRAY = 'logs.bq_json_scalar_array';
const STRING_ARRAY: BqType = { kind: 'array', element: STRING };
/** The JSON text renderer, and the array readers that answer NULL for a non-array: strict, total. */
const RENDER = { [JSON_TEXT]: TOTAL_STRICT, [JSON_FUNCTION]: SCALAR };

/** `$.a.b[0]` / `$["a"]` → path elements for `#>`. */
function jsonPath(site: CallSite, i: number): string[] {
  if (i < site.call.args.length && site.stringLiteral(i) === undefined) {
    throw new SqlUnsupportedError('the JSON path must be a string literal', site.text, site.call.args[i].pos);
  }
  const path = site.stringLiteral(i) ?? '$';
  const elements: string[] = [];
  const re = /\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*(\d+)\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*'([^']*)'\s*\]|\."([^"]*)"/y;
  if (!path.startsWith('$')) throw new SqlUnsupportedError('JSON paths start with $', site.text, site.call.args[i].pos);
  re.lastIndex = 1;
  while (re.lastIndex < path.length) {
    const m = re.exec(path);
    if (!m) throw new SqlUnsupportedError(`unsupported JSON path ${path}`, site.text, site.call.args[i].pos);
    elements.push(m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5]);
  }
  return elements;
}

/** A JSON function's input: records are jsonb already; text that is not JSON reads as NULL, as in BigQuery. */
function jsonInput(value: Typed): PgExpr {
  // A JSON value's text is JSON already: cast, without bq_json's catch of a parse error (a subtransaction per call).
  if (isScalar(value.type, 'JSON')) return pg.cast(value.sql, 'jsonb');
  return value.type.kind === 'scalar' ? pg.func(JSON_FUNCTION, [asText(value)]) : value.sql;
}

/** The value at the call's path (argument 1, `$` when absent) of its document (argument 0). */
function selected(site: CallSite): PgExpr {
  const doc = jsonInput(site.arg(0));
  const elements = jsonPath(site, 1);
  if (!elements.length) return doc;
  return pg.op('#>', doc, pg.array(elements.map((p) => pg.literal(p))));
}

/** JSON_VALUE answers NULL for objects and arrays; only scalars come out, as text. */
function scalarValue(value: PgExpr): PgExpr {
  const type = pg.func('jsonb_typeof', [value]);
  return pg.case(
    [
      { when: pg.op('=', type, pg.literal('object')), then: pg.literal(null) },
      { when: pg.op('=', type, pg.literal('array')), then: pg.literal(null) },
    ],
    pg.op('#>>', value, pg.literal('{}')),
  );
}

/** JSON_QUERY: compact JSON text; a JSON null is SQL NULL. Of a JSON value, a JSON value (a JSON null stays one). */
const query: FunctionDef = def(
  1,
  2,
  { ...RENDER, [JSON_RENDER]: TOTAL_STRICT, nullif: scalarFacts({ mayFail: true, syntax: true }) },
  (s) => {
    if (isScalar(s.arg(0).type, 'JSON')) return typed(pg.func(JSON_RENDER, [selected(s)]), JSON_TYPE);
    return typed(pg.func('nullif', [pg.func(JSON_TEXT, [selected(s)]), pg.literal('null')]), STRING);
  },
);

const value: FunctionDef = def(1, 2, { [JSON_FUNCTION]: SCALAR, jsonb_typeof: SCALAR }, (s) => typed(scalarValue(selected(s)), STRING));

const arrayOf = (name: string): FunctionDef =>
  def(1, 2, { [name]: TOTAL_STRICT, [JSON_TEXT]: TOTAL_STRICT, [JSON_FUNCTION]: SCALAR }, (s) =>
    typed(pg.func(name, [selected(s)]), STRING_ARRAY),
  );

/** TO_JSON / TO_JSON_STRING of an array of ranges: to_jsonb would write Postgres' text of each, not BigQuery's objects. */
function refuseRangeArray(s: CallSite): void {
  const t = s.arg(0).type;
  if (t.kind === 'array' && rangeElement(t.element))
    throw new SqlUnsupportedError(`${s.call.name.toUpperCase()} of an ${typeName(t)} is not supported`, s.text, s.call.args[0].pos);
}

/** What toJson writes for a RANGE: its bounds in an object. */
const RANGE_BOUNDS: Emits = { lower: TOTAL_STRICT, upper: TOTAL_STRICT, jsonb_build_object: SCALAR };

/** A SQL value as JSON text: TIMESTAMPs as ISO 8601 in UTC with Z, DATETIMEs without a zone, the rest as to_jsonb writes them. */
function toJson(v: Typed): PgExpr {
  // A JSON value is its own JSON; an array of them is their texts joined (an SQL NULL element is a JSON null).
  if (isScalar(v.type, 'JSON')) return pg.cast(v.sql, 'jsonb');
  if (v.type.kind === 'array' && isScalar(v.type.element, 'JSON'))
    return pg.cast(
      pg.op('||', pg.op('||', pg.literal('['), pg.func('array_to_string', [v.sql, pg.literal(','), pg.literal('null')])), pg.literal(']')),
      'jsonb',
    );
  if (isScalar(v.type, 'TIMESTAMP')) {
    const iso = pg.op('#>>', pg.func('to_jsonb', [pg.atUtc(v.sql)]), pg.literal('{}'));
    return pg.func('to_jsonb', [pg.op('||', iso, pg.literal('Z'))]);
  }
  // A RANGE is BigQuery's object of its bounds, `{"end":null,"start":"2020-01-01"}` (a NULL bound is unbounded).
  const element = rangeElement(v.type);
  if (element) {
    const bound = (name: string): PgExpr => toJson(typed(pg.func(name, [v.sql]), scalar(element)));
    const object = pg.func('jsonb_build_object', [pg.literal('start'), bound('lower'), pg.literal('end'), bound('upper')]);
    return pg.case([{ when: pg.is(v.sql, 'NULL', true), then: object }]);
  }
  // Typed, so that a literal or a NULL is not of unknown type (to_jsonb is polymorphic).
  return pg.func('to_jsonb', [v.type.kind === 'scalar' ? pg.cast(v.sql, pgTypeOf(v.type)) : v.sql]);
}

// ── the JSON type ──

const PARSE_JSON = 'logs.bq_parse_json';
const JSON_EDIT = 'logs.bq_json_edit';
/** The migration's functions that raise BigQuery's errors (invalid JSON, a value of the wrong JSON type). */
const RAISES: Emits = { [JSON_RENDER]: TOTAL_STRICT };

/** A JSON value of the type system, as SQL text. */
const json = (sql: PgExpr): Typed => typed(pg.func(JSON_RENDER, [sql]), JSON_TYPE);

/** The i-th argument, which must be a JSON value (a parameter is read as JSON text), as jsonb. */
function jsonArg(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, 'JSON', 'NULL') || v.param || (v.type.kind === 'scalar' && v.type.loose)) return pg.cast(v.sql, 'jsonb');
  return wrongType(s, i, 'JSON');
}

/** A SQL value as jsonb for a JSON function: SQL NULL is the JSON null. */
const jsonOf = (v: Typed): PgExpr => pg.func('coalesce', [toJson(v), pg.cast(pg.literal('null'), 'jsonb')]);

/** A named argument that must be a BOOL literal or expression (`create_if_missing => FALSE`), or its default. */
function namedBool(s: CallSite, name: string, otherwise: boolean): PgExpr {
  const v = s.named(name);
  if (!v) return pg.literal(otherwise);
  if (!isScalar(v.type, 'BOOL', 'NULL') && !v.param) throw new SqlSyntaxError(`${name} takes a BOOL`, s.text, s.call.pos);
  return pg.cast(v.sql, 'boolean');
}

/** A `mode`-like argument: a string literal among `allowed` (BigQuery's are case-sensitive). */
function modeLiteral(s: CallSite, v: string | undefined, at: number, name: string, allowed: readonly string[], otherwise: string): string {
  if (v === undefined && at < 0) return otherwise;
  if (v === undefined || !allowed.includes(v))
    throw new SqlSyntaxError(
      `${name} must be one of ${allowed.map((a) => `'${a}'`).join(', ')}`,
      s.text,
      at >= 0 ? s.call.args[at].pos : s.call.pos,
    );
  return v;
}

/** A JSONPath literal as `bq_json_edit` path elements: `$`, then `.key` and `[index`. */
function editPath(site: CallSite, i: number): PgExpr {
  const path = site.stringLiteral(i);
  if (path === undefined) throw new SqlUnsupportedError('the JSON path must be a string literal', site.text, site.call.args[i].pos);
  if (!path.startsWith('$')) throw new SqlSyntaxError('JSON paths start with $', site.text, site.call.args[i].pos);
  const elements = ['$'];
  const re = /\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*(\d+)\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*'([^']*)'\s*\]|\."([^"]*)"/y;
  re.lastIndex = 1;
  while (re.lastIndex < path.length) {
    const m = re.exec(path);
    if (!m) throw new SqlSyntaxError(`invalid JSON path ${path}`, site.text, site.call.args[i].pos);
    elements.push(m[2] !== undefined ? `[${m[2]}` : `.${m[1] ?? m[3] ?? m[4] ?? m[5]}`);
  }
  return pg.array(elements.map((e) => pg.literal(e)));
}

/**
 * JSON_SET / JSON_ARRAY_APPEND / JSON_ARRAY_INSERT: `(json, path, value[, path, value …][, flag => …])`,
 * each pair applied to the result of the one before; `each`: a SQL array value stands for its elements.
 */
function pathValues(op: 'set' | 'append' | 'insert', flagName: string): FunctionDef {
  return defWith(
    def(
      3,
      201,
      {
        [JSON_EDIT]: SCALAR,
        [JSON_RENDER]: TOTAL_STRICT,
        to_jsonb: SCALAR,
        array_to_string: TOTAL,
        coalesce: scalarFacts({ mayFail: false, syntax: true }),
      },
      (s) => {
        if (s.call.args.length % 2 === 0)
          throw new SqlSyntaxError(`${s.call.name.toUpperCase()} takes a JSON value and pairs of a path and a value`, s.text, s.call.pos);
        const flag = namedBool(s, flagName, true);
        let doc = jsonArg(s, 0);
        for (let i = 1; i < s.call.args.length; i += 2) {
          const value = s.arg(i + 1);
          // append_each_element / insert_each_element only spread a SQL array; create_if_missing is the flag itself.
          const each = op === 'set' ? flag : value.type.kind === 'array' ? flag : pg.literal(false);
          doc = pg.func(JSON_EDIT, [doc, editPath(s, i), pg.literal(op), jsonOf(value), each, pg.literal(false)]);
        }
        return json(doc);
      },
    ),
    { named: [flagName] },
  );
}

/** BOOL / INT64 / FLOAT64 / STRING of JSON: the migration's function, which raises BigQuery's error unless SAFE. */
function jsonConversion(name: string, type: BqType, extra: (s: CallSite) => PgExpr[] = () => []): FunctionDef {
  const build = (s: CallSite, safe: boolean): Typed => typed(pg.func(name, [jsonArg(s, 0), ...extra(s), pg.literal(safe)]), type);
  return defWith(
    def(1, 1 + extra.length, { [name]: PARTIAL_STRICT }, (s) => build(s, false)),
    { safe: (s) => build(s, true) },
  );
}

const lax = (name: string, type: BqType): FunctionDef =>
  def(1, 1, { [name]: TOTAL_STRICT }, (s) => typed(pg.func(name, [jsonArg(s, 0)]), type));

/** STRING(timestamp[, zone]) (timestamp functions) and STRING(json) (JSON functions). */
const string: FunctionDef = defWith(
  def(1, 2, { 'logs.bq_json_string': PARTIAL_STRICT, 'logs.bq_timestamp_string': PARTIAL_STRICT }, (s) => {
    const v = s.arg(0);
    if (isScalar(v.type, 'JSON')) {
      if (s.call.args.length > 1) throw new SqlSyntaxError('STRING of a JSON value takes no time zone', s.text, s.call.args[1].pos);
      return typed(pg.func('logs.bq_json_string', [pg.cast(v.sql, 'jsonb'), pg.literal(false)]), STRING);
    }
    if (!isScalar(v.type, 'TIMESTAMP', 'STRING', 'NULL') && !v.param) return wrongType(s, 0, 'TIMESTAMP or JSON');
    const zone = s.call.args.length > 1 ? asText(s.arg(1)) : pg.literal('UTC');
    return typed(pg.func('logs.bq_timestamp_string', [asTimestamp(v), zone]), STRING);
  }),
  {
    safe: (s) => {
      if (!isScalar(s.arg(0).type, 'JSON')) throw new SqlUnsupportedError('SAFE.STRING is for a JSON value', s.text, s.call.pos);
      return typed(pg.func('logs.bq_json_string', [pg.cast(s.arg(0).sql, 'jsonb'), pg.literal(true)]), STRING);
    },
  },
);

/** Whether a number of the JSON type must be held exactly (`wide_number_mode => 'exact'`). */
function exactNumbers(s: CallSite, at: number, otherwise: 'exact' | 'round'): boolean {
  return (
    modeLiteral(
      s,
      at < s.call.args.length ? s.stringLiteral(at) : undefined,
      at < s.call.args.length ? at : -1,
      'wide_number_mode',
      ['exact', 'round'],
      otherwise,
    ) === 'exact'
  );
}

/** TO_JSON(x, stringify_wide_numbers => TRUE): INT64 values beyond ±2^53 become JSON strings. */
function toJsonValue(s: CallSite): PgExpr {
  refuseRangeArray(s);
  const v = s.arg(0);
  const value = jsonOf(v);
  if (s.call.args.length < 2) return value;
  const stringify = s.arg(1);
  if (!isScalar(stringify.type, 'BOOL')) return wrongType(s, 1, 'BOOL');
  return pg.func('logs.bq_json_stringify_wide', [value, stringify.sql]);
}

const JSON_TYPE_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  parse_json: defWith(
    def(1, 2, { [PARSE_JSON]: PARTIAL_STRICT, ...RAISES }, (s) =>
      json(pg.func(PARSE_JSON, [asText(s.arg(0)), pg.literal(exactNumbers(s, 1, 'exact'))])),
    ),
    { params: ['json_string_expr', 'wide_number_mode'] },
  ),
  to_json: defWith(
    def(
      1,
      2,
      {
        ...RAISES,
        to_jsonb: SCALAR,
        array_to_string: TOTAL,
        'logs.bq_json_stringify_wide': TOTAL_STRICT,
        coalesce: scalarFacts({ mayFail: false, syntax: true }),
        ...RANGE_BOUNDS,
      },
      (s) => json(toJsonValue(s)),
    ),
    { params: ['sql_value', 'stringify_wide_numbers'] },
  ),
  bool: jsonConversion('logs.bq_json_bool', BOOL),
  int64: jsonConversion('logs.bq_json_int64', INT64),
  float64: defWith(
    jsonConversion('logs.bq_json_float64', FLOAT64, (s) => [pg.literal(exactNumbers(s, 1, 'round'))]),
    {
      params: ['json_expr', 'wide_number_mode'],
      safe: (s) =>
        typed(pg.func('logs.bq_json_float64', [jsonArg(s, 0), pg.literal(exactNumbers(s, 1, 'round')), pg.literal(true)]), FLOAT64),
    },
  ),
  string,
  lax_bool: lax('logs.bq_lax_bool', BOOL),
  lax_int64: lax('logs.bq_lax_int64', INT64),
  lax_float64: lax('logs.bq_lax_float64', FLOAT64),
  lax_string: lax('logs.bq_lax_string', STRING),
  json_array: def(0, 1000, { ...RAISES, jsonb_build_array: SCALAR, to_jsonb: SCALAR, array_to_string: TOTAL }, (s) =>
    json(
      pg.func(
        'jsonb_build_array',
        s.call.args.map((_, i) => toJson(s.arg(i))),
      ),
    ),
  ),
  json_object: def(
    0,
    1000,
    { ...RAISES, jsonb_build_object: SCALAR, to_jsonb: SCALAR, array_to_string: TOTAL, 'logs.bq_json_object': PARTIAL },
    (s) => {
      const n = s.call.args.length;
      if (n === 2 && s.arg(0).type.kind === 'array') {
        const keys = s.arg(0);
        if (!isScalar((keys.type as { element: BqType }).element, 'STRING', 'NULL')) return wrongType(s, 0, 'ARRAY<STRING>');
        return json(pg.func('logs.bq_json_object', [keys.sql, toJson(s.arg(1))]));
      }
      if (n % 2 !== 0) throw new SqlSyntaxError('JSON_OBJECT takes pairs of a key and a value', s.text, s.call.pos);
      // jsonb_build_object keeps the last of two equal keys; BigQuery the first: the pairs are given last to first.
      const pairs: PgExpr[] = [];
      for (let i = n - 2; i >= 0; i -= 2) pairs.push(stringKey(s, i), toJson(s.arg(i + 1)));
      return json(pg.func('jsonb_build_object', pairs));
    },
  ),
  json_set: pathValues('set', 'create_if_missing'),
  json_array_append: pathValues('append', 'append_each_element'),
  json_array_insert: pathValues('insert', 'insert_each_element'),
  json_remove: def(2, 200, { [JSON_EDIT]: SCALAR, ...RAISES }, (s) => {
    let doc = jsonArg(s, 0);
    for (let i = 1; i < s.call.args.length; i++) {
      if (s.stringLiteral(i)?.trim() === '$')
        throw new SqlSyntaxError("JSON_REMOVE cannot remove the path '$'", s.text, s.call.args[i].pos);
      doc = pg.func(JSON_EDIT, [
        doc,
        editPath(s, i),
        pg.literal('remove'),
        pg.cast(pg.literal(null), 'jsonb'),
        pg.literal(false),
        pg.literal(false),
      ]);
    }
    return json(doc);
  }),
  json_strip_nulls: defWith(
    def(1, 2, { [JSON_EDIT]: SCALAR, ...RAISES }, (s) => {
      const path = s.call.args.length > 1 ? editPath(s, 1) : pg.array([pg.literal('$')]);
      const doc = pg.func(JSON_EDIT, [
        jsonArg(s, 0),
        path,
        pg.literal('strip'),
        pg.cast(pg.literal(null), 'jsonb'),
        namedBool(s, 'include_arrays', true),
        namedBool(s, 'remove_empty', false),
      ]);
      return json(doc);
    }),
    { named: ['include_arrays', 'remove_empty'] },
  ),
  json_keys: defWith(
    def(1, 2, { 'logs.bq_json_keys': TOTAL_STRICT }, (s) => {
      const depth = s.call.args.length > 1 ? pg.cast(s.arg(1).sql, 'bigint') : pg.cast(pg.literal('9223372036854775807'), 'bigint');
      const mode = s.call.named?.mode;
      const literal = mode?.kind === 'literal' && mode.type === 'STRING' ? (mode.value as string) : undefined;
      if (mode && !['strict', 'lax', 'lax recursive'].includes(literal ?? ''))
        throw new SqlSyntaxError("mode must be one of 'strict', 'lax', 'lax recursive'", s.text, mode.pos);
      return typed(pg.func('logs.bq_json_keys', [jsonArg(s, 0), depth, pg.literal(literal ?? 'strict')]), {
        kind: 'array',
        element: STRING,
      });
    }),
    { named: ['mode'] },
  ),
};

/** A JSON_OBJECT key: a STRING. */
function stringKey(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, 'STRING', 'NULL') || v.param) return pg.cast(v.sql, 'text');
  return wrongType(s, i, 'STRING');
}

export const JSON_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  ...JSON_TYPE_FUNCTIONS,
  json_value: value,
  json_extract_scalar: value,
  json_query: query,
  json_extract: query,
  json_query_array: arrayOf(JSON_ARRAY),
  json_extract_array: arrayOf(JSON_ARRAY),
  json_value_array: arrayOf(JSON_SCALAR_ARRAY),
  json_extract_string_array: arrayOf(JSON_SCALAR_ARRAY),
  json_type: def(1, 1, { [JSON_FUNCTION]: SCALAR, jsonb_typeof: SCALAR }, (s) =>
    typed(pg.func('jsonb_typeof', [jsonInput(s.arg(0))]), STRING),
  ),
  // A NULL is the JSON text `null`, as BigQuery writes it; `pretty_print` is jsonb_pretty's layout (four-space indent).
  to_json_string: def(
    1,
    2,
    {
      [JSON_TEXT]: TOTAL_STRICT,
      to_jsonb: SCALAR,
      jsonb_pretty: TOTAL_STRICT,
      coalesce: scalarFacts({ mayFail: false, syntax: true }),
      ...RANGE_BOUNDS,
    },
    (s) => {
      refuseRangeArray(s);
      if (isScalar(s.arg(0).type, 'JSON') && s.call.args.length < 2)
        return typed(pg.func('coalesce', [s.arg(0).sql, pg.literal('null')]), STRING);
      const json = toJson(s.arg(0));
      const compact = pg.func('coalesce', [pg.func(JSON_TEXT, [json]), pg.literal('null')]);
      if (s.call.args.length < 2) return typed(compact, STRING);
      return typed(
        pg.case([{ when: s.arg(1).sql, then: pg.func('coalesce', [pg.func('jsonb_pretty', [json]), pg.literal('null')]) }], compact),
        STRING,
      );
    },
  ),
};
