/**
 * JSON functions over JSON-formatted strings and over records (`metadata`, STRUCTs), answered as
 * BigQuery answers them for a JSON-formatted STRING: text that is not JSON reads as NULL, a JSON
 * `null` selected by JSON_QUERY is SQL NULL, and JSON comes back compact (`{"a":1}`), rendered by
 * `logs.bq_json_text` (migrations/1764200000000_bigquery-library-functions.js). Objects keep
 * jsonb's key order (shorter keys first), not the input's (docs/COMPATIBILITY.md).
 */
import { JSON_FUNCTION, asText, pgTypeOf } from '../coerce.js';
import { SqlUnsupportedError } from '../errors.js';
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { SCALAR, TOTAL_STRICT, scalar as scalarFacts } from '../postgres/facts.js';
import { STRING, isScalar, typed, type BqType, type Typed } from '../types.js';
import { def } from './define.js';

export const JSON_TEXT = 'logs.bq_json_text';
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

/** JSON_QUERY: compact JSON text; a JSON null is SQL NULL. */
const query: FunctionDef = def(1, 2, { ...RENDER, nullif: scalarFacts({ mayFail: true, syntax: true }) }, (s) =>
  typed(pg.func('nullif', [pg.func(JSON_TEXT, [selected(s)]), pg.literal('null')]), STRING),
);

const value: FunctionDef = def(1, 2, { [JSON_FUNCTION]: SCALAR, jsonb_typeof: SCALAR }, (s) => typed(scalarValue(selected(s)), STRING));

const arrayOf = (name: string): FunctionDef =>
  def(1, 2, { [name]: TOTAL_STRICT, [JSON_TEXT]: TOTAL_STRICT, [JSON_FUNCTION]: SCALAR }, (s) =>
    typed(pg.func(name, [selected(s)]), STRING_ARRAY),
  );

/** A SQL value as JSON text: TIMESTAMPs as ISO 8601 in UTC with Z, DATETIMEs without a zone, the rest as to_jsonb writes them. */
function toJson(v: Typed): PgExpr {
  if (isScalar(v.type, 'TIMESTAMP')) {
    const iso = pg.op('#>>', pg.func('to_jsonb', [pg.atUtc(v.sql)]), pg.literal('{}'));
    return pg.func('to_jsonb', [pg.op('||', iso, pg.literal('Z'))]);
  }
  // Typed, so that a literal or a NULL is not of unknown type (to_jsonb is polymorphic).
  return pg.func('to_jsonb', [v.type.kind === 'scalar' ? pg.cast(v.sql, pgTypeOf(v.type)) : v.sql]);
}

export const JSON_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
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
    { [JSON_TEXT]: TOTAL_STRICT, to_jsonb: SCALAR, jsonb_pretty: TOTAL_STRICT, coalesce: scalarFacts({ mayFail: false, syntax: true }) },
    (s) => {
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
