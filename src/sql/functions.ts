/**
 * The BigQuery function table: each allowed function name maps to a builder of Postgres nodes and
 * declares the Postgres functions that builder emits, with their facts (`emits`). It is wall 1's
 * allowlist (a name missing here is an unknown function, whatever Postgres has), and catalogue.ts
 * derives from it wall 2's allowlist and what the rewrites know about each Postgres function.
 *
 * Adding a function is one entry here and a test in test/sql/functions.test.ts.
 */
import { JSON_FUNCTION, adapt, asNumber, asText, asTimestamp, commonType, compared, unifyAll } from './coerce.js';
import { SqlUnsupportedError } from './errors.js';
import type { Call } from './ast/expressions.js';
import { pg, type PgExpr, type PgOrder } from './postgres/ast.js';
import { containsLiteral, containsValue } from './postgres/search.js';
import {
  AGGREGATE,
  ORDER_SENSITIVE_AGGREGATE,
  PARTIAL,
  PARTIAL_STRICT,
  SCALAR,
  TOTAL,
  TOTAL_STRICT,
  WINDOW_FUNCTION,
  aggregate,
  scalar as scalarFacts,
  type PgFunctionFacts,
} from './postgres/facts.js';
import { BOOL, FLOAT64, INT64, STRING, TIMESTAMP, isScalar, scalar, typed, type BqType, type Typed } from './types.js';

/** What a builder can ask of the call being translated. */
export interface CallSite {
  readonly call: Call;
  readonly text: string;
  /** The i-th argument, resolved (and cached). */
  arg(i: number): Typed;
  /** The i-th argument written as a bare word (`hour` in `timestamp_trunc(ts, hour)`), upper-cased. */
  word(i: number): string;
  /** The i-th argument's value when it is a string literal. */
  stringLiteral(i: number): string | undefined;
  /** The i-th argument's value when it is an integer literal. */
  integerLiteral(i: number): number | undefined;
  /** The call's `ORDER BY` (array_agg, string_agg), resolved. */
  orderBy(): PgOrder[];
}

/** Postgres functions a builder emits, by name, with their facts. */
export type Emits = Readonly<Record<string, PgFunctionFacts>>;

export interface FunctionDef {
  readonly min: number;
  readonly max: number;
  /**
   * Every Postgres function the builder writes with `pg.func` (those written by coerce.ts and the
   * AST helpers are catalogue.ts's). Wall 2 refuses any other, so a missing name fails the
   * function's test.
   */
  readonly emits: Emits;
  /** Aggregates may take DISTINCT / ORDER BY / LIMIT as listed; others take none. */
  readonly aggregate?: { readonly distinct?: boolean; readonly orderBy?: boolean };
  /**
   * Use with `OVER (…)`: `function` (row_number, lag, …) must have it; `aggregate` may have it.
   * `orderBy` required means the window must have ORDER BY; `frame` whether a ROWS / RANGE frame
   * is allowed (BigQuery refuses one for numbering and lag / lead).
   */
  readonly window?: { readonly kind: 'function' | 'aggregate'; readonly orderBy?: 'required'; readonly frame: boolean };
  build(site: CallSite): Typed;
}

const AGGREGATE_WINDOW = Object.freeze({ kind: 'aggregate', frame: true } as const);
const windowed = (d: FunctionDef, window: FunctionDef['window']): FunctionDef => Object.freeze({ ...d, window });

/** A window function of no arguments (`row_number()`, `rank()`, …). */
function numbering(name: string, type: BqType, orderBy?: 'required'): FunctionDef {
  return windowed(
    def(0, 0, { [name]: WINDOW_FUNCTION }, () => fn(name, [], type)),
    { kind: 'function', orderBy, frame: false },
  );
}

/** A non-negative integer argument of a window function, as a literal or a parameter. */
function windowCount(s: CallSite, i: number, what: string, min: number): PgExpr {
  const n = s.integerLiteral(i);
  if (n !== undefined) {
    if (n < min || n > 2_147_483_647)
      throw new SqlUnsupportedError(`${what} must be ${min === 0 ? 'non-negative' : 'positive'}`, s.text, s.call.args[i].pos);
    return pg.number(String(n));
  }
  if (s.call.args[i].kind === 'param') return pg.cast(s.arg(i).sql, 'integer');
  throw new SqlUnsupportedError(`${what} must be an integer literal or a parameter`, s.text, s.call.args[i].pos);
}

/** lag / lead: `(x[, offset[, default]])`; the default takes the value's type. */
function navigation(name: string): FunctionDef {
  return windowed(
    def(1, 3, { [name]: WINDOW_FUNCTION }, (s) => {
      const v = s.arg(0);
      const args: PgExpr[] = [v.sql];
      if (s.call.args.length > 1) args.push(windowCount(s, 1, `the offset of ${name.toUpperCase()}`, 0));
      if (s.call.args.length > 2) {
        const [value, otherwise] = unifyAll([v, s.arg(2)]);
        args[0] = value.sql;
        args.push(otherwise.sql);
      }
      return fn(name, args, v.type);
    }),
    { kind: 'function', orderBy: 'required', frame: false },
  );
}

const REGEX_META = /[\\^$.|?*+()[\]{}]/;
/** REGEX_META as a Postgres regular expression (a bracket expression: `]` first, then the rest, the backslash escaped). */
const PG_REGEX_META = '[]\\\\^$.|?*+()[{}]';

const TRUNC_PARTS: Readonly<Record<string, string>> = {
  MICROSECOND: 'microseconds',
  MILLISECOND: 'milliseconds',
  SECOND: 'second',
  MINUTE: 'minute',
  HOUR: 'hour',
  DAY: 'day',
  WEEK: 'week',
  MONTH: 'month',
  QUARTER: 'quarter',
  YEAR: 'year',
};

/** strftime elements of BigQuery's FORMAT/PARSE_TIMESTAMP and their to_char / to_timestamp equivalents. */
const FORMAT_ELEMENTS: Readonly<Record<string, string>> = {
  Y: 'YYYY',
  m: 'MM',
  d: 'DD',
  H: 'HH24',
  M: 'MI',
  S: 'SS',
  F: 'YYYY-MM-DD',
  T: 'HH24:MI:SS',
  D: 'MM/DD/YY',
  y: 'YY',
  j: 'DDD',
  b: 'Mon',
  h: 'Mon',
  B: 'FMMonth',
  a: 'Dy',
  A: 'FMDay',
  p: 'AM',
  I: 'HH12',
  e: 'FMDD',
  Z: '"UTC"',
  '%': '%',
  'E*S': 'SS.US',
  E6S: 'SS.US',
  E3S: 'SS.MS',
  R: 'HH24:MI',
  c: 'Dy Mon FMDD HH24:MI:SS YYYY',
};

const def = (min: number, max: number, emits: Emits, build: FunctionDef['build'], aggregate?: FunctionDef['aggregate']): FunctionDef =>
  Object.freeze({ min, max, emits, build, aggregate });

// Facts of Postgres functions that several entries emit (a name must have the same facts everywhere).
const DATE_TRUNC: Emits = { date_trunc: TOTAL };
const NOW: Emits = { now: SCALAR };
const COALESCE = scalarFacts({ mayFail: false, syntax: true });
const MIN_MAX = scalarFacts({ mayFail: true, syntax: true });
const NULLIF = scalarFacts({ mayFail: true, syntax: true });

const fn = (name: string, args: PgExpr[], type: BqType): Typed => typed(pg.func(name, args), type);

function args(site: CallSite): Typed[] {
  return site.call.args.map((_, i) => site.arg(i));
}

function truncPart(site: CallSite, i: number): string {
  const word = site.word(i);
  const part = TRUNC_PARTS[word];
  if (!part) throw new SqlUnsupportedError(`unknown date part ${word}`, site.text, site.call.args[i].pos);
  return part;
}

/**
 * Parts of fixed length in UTC (no daylight saving, no leap seconds in Postgres), truncated by
 * `date_bin(stride, ts, origin)`: whole strides from a UTC midnight, which is truncation in UTC
 * whatever the session's time zone; weeks from a Sunday, where BigQuery's weeks start (Postgres'
 * date_trunc weeks start on Monday). perf: date_bin is arithmetic on the instant, where
 * `date_trunc(part, ts, 'UTC')` converts to and from the zone for every row (an edge chart per
 * minute over 6 h: 6.4 → 4.7 ms; BENCHMARKS.md, "Hot leaves"). It fails only where the time from
 * the origin overflows 64-bit microseconds, past the year 294,000; BigQuery's TIMESTAMPs end at
 * 9999, so it is as total as date_trunc for the catalogue (postgres/facts.ts).
 */
const BIN_STRIDES: Readonly<Record<string, { stride: string; origin: string }>> = {
  microseconds: { stride: '1 microsecond', origin: '1970-01-01 00:00:00+00' },
  milliseconds: { stride: '1 millisecond', origin: '1970-01-01 00:00:00+00' },
  second: { stride: '1 second', origin: '1970-01-01 00:00:00+00' },
  minute: { stride: '1 minute', origin: '1970-01-01 00:00:00+00' },
  hour: { stride: '1 hour', origin: '1970-01-01 00:00:00+00' },
  day: { stride: '1 day', origin: '1970-01-01 00:00:00+00' },
  week: { stride: '7 days', origin: '1970-01-04 00:00:00+00' }, // a Sunday
};

/** A TIMESTAMP truncated to `part` in UTC: date_bin for fixed lengths, else `date_trunc(part, ts, 'UTC')`. */
function truncTimestamp(ts: PgExpr, part: string): PgExpr {
  const bin = BIN_STRIDES[part];
  if (bin) return pg.func('date_bin', [pg.cast(pg.literal(bin.stride), 'interval'), ts, pg.cast(pg.literal(bin.origin), 'timestamptz')]);
  return pg.func('date_trunc', [pg.literal(part), ts, pg.literal('UTC')]);
}

function toPgFormat(site: CallSite, i: number): string {
  const format = site.stringLiteral(i);
  if (format === undefined) throw new SqlUnsupportedError('the format must be a string literal', site.text, site.call.args[i].pos);
  let out = '';
  let literal = '';
  const flush = (): void => {
    if (literal) out += `"${literal.replace(/"/g, '\\"')}"`;
    literal = '';
  };
  for (let k = 0; k < format.length; k++) {
    if (format[k] !== '%') {
      literal += format[k];
      continue;
    }
    const element = ['E*S', 'E6S', 'E3S'].find((e) => format.startsWith(e, k + 1)) ?? format[k + 1] ?? '';
    const mapped = FORMAT_ELEMENTS[element];
    if (mapped === undefined)
      throw new SqlUnsupportedError(`format element %${element} is not supported`, site.text, site.call.args[i].pos);
    flush();
    out += mapped === '%' ? '"%"' : mapped;
    k += element.length;
  }
  flush();
  return out;
}

/** Unix epoch units: the Postgres interval of one unit and the factor from seconds. */
const EPOCH_UNITS = { seconds: ['1 second', 1], millis: ['1 millisecond', 1_000], micros: ['1 microsecond', 1_000_000] } as const;

function unixFrom(unit: keyof typeof EPOCH_UNITS): FunctionDef {
  return def(1, 1, { floor: SCALAR }, (s) => {
    const epoch = pg.extract('epoch', asTimestamp(s.arg(0)));
    // extract() returns numeric, so the product is exact; BigQuery truncates towards -infinity.
    return typed(pg.cast(pg.func('floor', [pg.op('*', epoch, pg.number(String(EPOCH_UNITS[unit][1])))]), 'bigint'), INT64);
  });
}

function timestampFrom(unit: keyof typeof EPOCH_UNITS): FunctionDef {
  return def(1, 1, { to_timestamp: SCALAR }, (s) => {
    const oneUnit = pg.cast(pg.literal(EPOCH_UNITS[unit][0]), 'interval');
    return typed(pg.op('+', pg.func('to_timestamp', [pg.number('0')]), pg.op('*', asNumber(s.arg(0)), oneUnit)), TIMESTAMP);
  });
}

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

function jsonExtract(scalarOnly: boolean): FunctionDef {
  return def(1, 2, scalarOnly ? { [JSON_FUNCTION]: SCALAR, jsonb_typeof: SCALAR } : { [JSON_FUNCTION]: SCALAR }, (s) => {
    const doc = jsonInput(s.arg(0));
    const elements = jsonPath(s, 1);
    // `$` alone: the document itself; an empty ARRAY[] would have no type, the literal '{}' is read as text[].
    const path = elements.length ? pg.array(elements.map((p) => pg.literal(p))) : pg.literal('{}');
    return typed(scalarOnly ? scalarValue(doc, path) : pg.cast(pg.op('#>', doc, path), 'text'), STRING);
  });
}

/** JSON_VALUE answers NULL for objects and arrays; only scalars come out, as text. */
function scalarValue(doc: PgExpr, path: PgExpr): PgExpr {
  const type = pg.func('jsonb_typeof', [pg.op('#>', doc, path)]);
  return pg.case(
    [
      { when: pg.op('=', type, pg.literal('object')), then: pg.literal(null) },
      { when: pg.op('=', type, pg.literal('array')), then: pg.literal(null) },
    ],
    pg.op('#>>', doc, path),
  );
}

/** A Postgres function over arguments unified to one common type (coalesce, greatest, least). */
function variadic(pgName: string, facts: PgFunctionFacts, min: number, max: number): FunctionDef {
  return def(min, max, { [pgName]: facts }, (s) => {
    const values = unifyAll(args(s));
    return typed(
      pg.func(
        pgName,
        values.map((v) => v.sql),
      ),
      commonType(values),
    );
  });
}

/** An order-free aggregate of one argument, optionally with DISTINCT, usable with OVER. */
function aggregateOf(name: string, result: (t: BqType) => BqType, cast?: (t: BqType) => 'bigint' | 'float8' | undefined): FunctionDef {
  return windowed(
    def(
      1,
      1,
      { [name]: AGGREGATE },
      (s) => {
        const v = s.arg(0);
        const call = pg.func(name, [v.sql], { distinct: s.call.distinct });
        const to = cast?.(v.type);
        return typed(to ? pg.cast(call, to) : call, result(v.type));
      },
      { distinct: true },
    ),
    AGGREGATE_WINDOW,
  );
}

/**
 * A statistical aggregate of one or two numbers (STDDEV, VARIANCE, CORR, COVAR_*): FLOAT64 as in
 * BigQuery (Postgres answers numeric for integer input); a parameter or an untyped leaf is read
 * as a number. DISTINCT as BigQuery allows it: for one argument only.
 */
function statistic(name: string, arity: 1 | 2): FunctionDef {
  return windowed(
    def(
      arity,
      arity,
      { [name]: AGGREGATE },
      (s) => {
        const values = arity === 1 ? [asNumber(s.arg(0))] : [asNumber(s.arg(0)), asNumber(s.arg(1))];
        return typed(pg.cast(pg.func(name, values, { distinct: s.call.distinct }), 'float8'), FLOAT64);
      },
      arity === 1 ? { distinct: true } : undefined,
    ),
    AGGREGATE_WINDOW,
  );
}

/** LOGICAL_AND / LOGICAL_OR: Postgres' bool_and / bool_or, which skip NULLs as BigQuery does. */
function logical(name: 'bool_and' | 'bool_or'): FunctionDef {
  return windowed(
    def(1, 1, { [name]: AGGREGATE }, (s) => fn(name, [adapt(s.arg(0), BOOL).sql], BOOL)),
    AGGREGATE_WINDOW,
  );
}

/** BIT_AND / BIT_OR of INT64 values; a parameter or an untyped leaf is read as one. */
function bitwise(name: 'bit_and' | 'bit_or'): FunctionDef {
  return windowed(
    def(
      1,
      1,
      { [name]: AGGREGATE },
      (s) => {
        const v = s.arg(0);
        const loose = v.param || (v.type.kind === 'scalar' && v.type.loose);
        if (!loose && !isScalar(v.type, 'INT64'))
          throw new SqlUnsupportedError(`${name.toUpperCase()} takes INT64 values`, s.text, s.call.args[0].pos);
        return typed(pg.func(name, [loose ? pg.cast(v.sql, 'bigint') : v.sql], { distinct: s.call.distinct }), INT64);
      },
      { distinct: true },
    ),
    AGGREGATE_WINDOW,
  );
}

export const FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  // ── strings and regular expressions ──
  regexp_contains: def(2, 2, { replace: PARTIAL_STRICT }, (s) => {
    const pattern = s.arg(1);
    const text = asText(s.arg(0));
    // A pattern without metacharacters is a plain containment test: cheaper than a regex, and
    // printed as LIKE '%…%' so a trigram index serves it (src/sql/postgres/search.ts).
    const literal = s.stringLiteral(1);
    if (literal !== undefined)
      return typed(REGEX_META.test(literal) ? pg.op('~', text, pattern.sql) : containsLiteral(text, literal), BOOL);
    if (!pattern.param) return typed(pg.op('~', text, pattern.sql), BOOL);
    // A parameter (`regexp_contains(url, @project)`): the same choice, made by Postgres when it plans. Queries run as
    // unnamed statements, so the planner sees the value, evaluates the test once and keeps one branch
    // (docs/ARCHITECTURE.md, "Plain texts: a containment test, not a regex").
    return typed(
      pg.case(
        [{ when: pg.op('~', pattern.sql, pg.literal(PG_REGEX_META)), then: pg.op('~', text, pattern.sql) }],
        containsValue(text, pattern.sql),
      ),
      BOOL,
    );
  }),
  // substring(text, pattern) returns the first capture group, or the whole match without one: BigQuery's rule.
  regexp_extract: def(2, 2, { substring: PARTIAL_STRICT }, (s) => fn('substring', [asText(s.arg(0)), s.arg(1).sql], STRING)),
  regexp_replace: def(3, 3, { regexp_replace: PARTIAL }, (s) =>
    fn('regexp_replace', [asText(s.arg(0)), s.arg(1).sql, s.arg(2).sql, pg.literal('g')], STRING),
  ),
  starts_with: def(2, 2, { starts_with: TOTAL_STRICT }, (s) => fn('starts_with', [asText(s.arg(0)), asText(s.arg(1))], BOOL)),
  ends_with: def(2, 2, { right: PARTIAL_STRICT, length: TOTAL_STRICT }, (s) => {
    const suffix = asText(s.arg(1));
    return typed(pg.op('=', pg.func('right', [asText(s.arg(0)), pg.func('length', [suffix])]), suffix), BOOL);
  }),
  // `||` is NULL when any operand is NULL, like BigQuery's CONCAT (Postgres' concat() skips NULLs).
  concat: def(1, 100, {}, (s) =>
    typed(
      args(s)
        .map(asText)
        .reduce((a, b) => pg.op('||', a, b)),
      STRING,
    ),
  ),
  lower: def(1, 1, { lower: TOTAL_STRICT }, (s) => fn('lower', [asText(s.arg(0))], STRING)),
  upper: def(1, 1, { upper: TOTAL_STRICT }, (s) => fn('upper', [asText(s.arg(0))], STRING)),
  length: def(1, 1, { length: TOTAL_STRICT }, (s) => fn('length', [asText(s.arg(0))], INT64)),
  trim: def(1, 1, { btrim: PARTIAL_STRICT }, (s) => fn('btrim', [asText(s.arg(0))], STRING)),
  replace: def(3, 3, { replace: PARTIAL_STRICT }, (s) => fn('replace', [asText(s.arg(0)), asText(s.arg(1)), asText(s.arg(2))], STRING)),
  substr: def(2, 3, { substr: PARTIAL_STRICT }, (s) =>
    fn(
      'substr',
      args(s).map((a, i) => (i === 0 ? asText(a) : asNumber(a))),
      STRING,
    ),
  ),
  split: def(1, 2, { string_to_array: SCALAR }, (s) =>
    typed(pg.func('string_to_array', [asText(s.arg(0)), s.call.args.length > 1 ? s.arg(1).sql : pg.literal(',')]), {
      kind: 'array',
      element: STRING,
    }),
  ),

  // ── conditionals ──
  coalesce: variadic('coalesce', COALESCE, 1, 100),
  ifnull: variadic('coalesce', COALESCE, 2, 2),
  if: def(3, 3, {}, (s) => {
    const [then, otherwise] = unifyAll([s.arg(1), s.arg(2)]);
    return typed(pg.case([{ when: s.arg(0).sql, then: then.sql }], otherwise.sql), commonType([then, otherwise]));
  }),
  nullif: def(2, 2, { nullif: NULLIF }, (s) => {
    const [a, b] = compared(s.arg(0), s.arg(1), 'NULLIF', s.text, s.call.pos);
    return typed(pg.func('nullif', [a.sql, b.sql]), a.type);
  }),
  safe_divide: def(2, 2, { nullif: NULLIF }, (s) =>
    typed(pg.op('/', pg.cast(s.arg(0).sql, 'float8'), pg.func('nullif', [pg.cast(s.arg(1).sql, 'float8'), pg.number('0')])), FLOAT64),
  ),

  // ── aggregates ──
  count: windowed(
    def(
      0,
      1,
      { count: AGGREGATE },
      (s) => {
        if (s.call.star || s.call.args.length === 0) return typed(pg.func('count', [], { star: true }), INT64);
        return typed(pg.func('count', [s.arg(0).sql], { distinct: s.call.distinct }), INT64);
      },
      { distinct: true },
    ),
    AGGREGATE_WINDOW,
  ),
  countif: windowed(
    def(1, 1, { count: AGGREGATE }, (s) => typed(pg.func('count', [], { star: true, filter: s.arg(0).sql }), INT64)),
    AGGREGATE_WINDOW,
  ),
  // Postgres sums bigint into numeric; BigQuery keeps INT64.
  sum: aggregateOf(
    'sum',
    (t) => (isScalar(t, 'INT64') ? INT64 : isScalar(t, 'NUMERIC') ? t : FLOAT64),
    (t) => (isScalar(t, 'INT64') ? 'bigint' : undefined),
  ),
  avg: aggregateOf(
    'avg',
    (t) => (isScalar(t, 'NUMERIC') ? t : FLOAT64),
    (t) => (isScalar(t, 'NUMERIC') ? undefined : 'float8'),
  ),
  min: aggregateOf('min', (t) => t),
  max: aggregateOf('max', (t) => t),
  // BigQuery's STDDEV and VARIANCE are the sample ones.
  stddev: statistic('stddev_samp', 1),
  stddev_samp: statistic('stddev_samp', 1),
  stddev_pop: statistic('stddev_pop', 1),
  variance: statistic('var_samp', 1),
  var_samp: statistic('var_samp', 1),
  var_pop: statistic('var_pop', 1),
  corr: statistic('corr', 2),
  covar_pop: statistic('covar_pop', 2),
  covar_samp: statistic('covar_samp', 2),
  logical_and: logical('bool_and'),
  logical_or: logical('bool_or'),
  bit_and: bitwise('bit_and'),
  bit_or: bitwise('bit_or'),
  // BigQuery's ANY_VALUE skips NULLs; Postgres 15 has no any_value.
  any_value: windowed(
    def(1, 1, { array_agg: ORDER_SENSITIVE_AGGREGATE }, (s) => {
      const v = s.arg(0);
      const agg = pg.func('array_agg', [v.sql], { filter: pg.is(v.sql, 'NULL', true) });
      return typed(pg.subscript(agg, pg.number('1')), v.type);
    }),
    AGGREGATE_WINDOW,
  ),
  array_agg: windowed(
    def(
      1,
      1,
      { array_agg: ORDER_SENSITIVE_AGGREGATE, jsonb_agg: ORDER_SENSITIVE_AGGREGATE, to_jsonb: SCALAR },
      (s) => {
        const v = s.arg(0);
        // Records and JSON arrays aggregate into jsonb, so they come back in the stored shape.
        const json = v.type.kind !== 'scalar';
        const type: BqType = json ? { kind: 'jsonArray', element: v.type, single: false } : { kind: 'array', element: v.type };
        if (s.call.limit) {
          // LIMIT n: the first n of the ordered array (a slice; Postgres aggregates take no LIMIT), back to jsonb for records.
          const limit = s.call.limit;
          const n = limit.kind === 'literal' && limit.type === 'INT64' ? Number(limit.value) : undefined;
          if (n === undefined || !Number.isSafeInteger(n) || n > 2_147_483_647)
            throw new SqlUnsupportedError('ARRAY_AGG … LIMIT takes an integer literal', s.text, s.call.limit.pos);
          const slice = pg.slice(
            pg.func('array_agg', [v.sql], { distinct: s.call.distinct, orderBy: s.orderBy() }),
            pg.number('1'),
            pg.number(String(n)),
          );
          return typed(json ? pg.func('to_jsonb', [slice]) : slice, type);
        }
        const agg = pg.func(json ? 'jsonb_agg' : 'array_agg', [v.sql], { distinct: s.call.distinct, orderBy: s.orderBy() });
        return typed(agg, type);
      },
      { distinct: true, orderBy: true },
    ),
    AGGREGATE_WINDOW,
  ),
  string_agg: windowed(
    def(
      1,
      2,
      { string_agg: ORDER_SENSITIVE_AGGREGATE },
      (s) => {
        if (s.call.limit) throw new SqlUnsupportedError('STRING_AGG … LIMIT is not supported', s.text, s.call.limit.pos);
        const delimiter = s.call.args.length > 1 ? s.arg(1).sql : pg.literal(',');
        return typed(pg.func('string_agg', [asText(s.arg(0)), delimiter], { distinct: s.call.distinct, orderBy: s.orderBy() }), STRING);
      },
      { distinct: true, orderBy: true },
    ),
    AGGREGATE_WINDOW,
  ),
  // An ordered-set aggregate: its WITHIN GROUP orders the input, and it takes no OVER.
  approx_quantiles: def(2, 2, { percentile_disc: aggregate({ orderSensitive: false, window: false }) }, (s) => {
    const buckets = s.integerLiteral(1);
    if (buckets === undefined || buckets < 1 || buckets > 1000)
      throw new SqlUnsupportedError('approx_quantiles needs a literal number of quantiles from 1 to 1000', s.text, s.call.args[1].pos);
    const fractions = Array.from({ length: buckets + 1 }, (_, k) => pg.number(String(k / buckets)));
    const v = s.arg(0);
    const agg = pg.func('percentile_disc', [pg.array(fractions)], { withinGroup: [{ expr: v.sql, desc: false }] });
    return typed(agg, { kind: 'array', element: v.type });
  }),

  // ── window functions (OVER required) ──
  row_number: numbering('row_number', INT64),
  rank: numbering('rank', INT64, 'required'),
  dense_rank: numbering('dense_rank', INT64, 'required'),
  percent_rank: numbering('percent_rank', FLOAT64, 'required'),
  cume_dist: numbering('cume_dist', FLOAT64, 'required'),
  ntile: windowed(
    def(1, 1, { ntile: WINDOW_FUNCTION }, (s) => fn('ntile', [windowCount(s, 0, 'the number of NTILE buckets', 1)], INT64)),
    { kind: 'function', orderBy: 'required', frame: false },
  ),
  lag: navigation('lag'),
  lead: navigation('lead'),
  first_value: windowed(
    def(1, 1, { first_value: WINDOW_FUNCTION }, (s) => fn('first_value', [s.arg(0).sql], s.arg(0).type)),
    { kind: 'function', frame: true },
  ),
  last_value: windowed(
    def(1, 1, { last_value: WINDOW_FUNCTION }, (s) => fn('last_value', [s.arg(0).sql], s.arg(0).type)),
    { kind: 'function', frame: true },
  ),
  nth_value: windowed(
    def(2, 2, { nth_value: WINDOW_FUNCTION }, (s) =>
      fn('nth_value', [s.arg(0).sql, windowCount(s, 1, 'the position of NTH_VALUE', 1)], s.arg(0).type),
    ),
    { kind: 'function', frame: true },
  ),

  // ── arrays ──
  // cardinality: 0 for an empty array (array_length gives NULL); a JSON value that is not an array counts as missing.
  array_length: def(1, 1, { cardinality: SCALAR, jsonb_array_length: SCALAR, jsonb_typeof: SCALAR }, (s) => {
    const v = s.arg(0);
    if (v.type.kind === 'array') return typed(pg.cast(pg.func('cardinality', [v.sql]), 'bigint'), INT64);
    if (v.type.kind === 'jsonArray') {
      const array = pg.case([{ when: pg.op('=', pg.func('jsonb_typeof', [v.sql]), pg.literal('array')), then: v.sql }]);
      return typed(pg.cast(pg.func('jsonb_array_length', [array]), 'bigint'), INT64);
    }
    if (isScalar(v.type, 'NULL')) return typed(pg.cast(pg.literal(null), 'bigint'), INT64);
    throw new SqlUnsupportedError('ARRAY_LENGTH needs an array', s.text, s.call.args[0].pos);
  }),

  // ── time ──
  current_timestamp: def(0, 0, NOW, () => fn('now', [], TIMESTAMP)),
  current_datetime: def(0, 0, NOW, () => typed(pg.atUtc(pg.func('now', [])), scalar('DATETIME'))),
  current_date: def(0, 0, NOW, () => typed(pg.cast(pg.atUtc(pg.func('now', [])), 'date'), scalar('DATE'))),
  timestamp_trunc: def(2, 3, { ...DATE_TRUNC, date_bin: TOTAL }, (s) =>
    typed(truncTimestamp(asTimestamp(s.arg(0)), truncPart(s, 1)), TIMESTAMP),
  ),
  datetime_trunc: def(2, 2, DATE_TRUNC, (s) =>
    typed(pg.func('date_trunc', [pg.literal(truncPart(s, 1)), s.arg(0).sql]), scalar('DATETIME')),
  ),
  date_trunc: def(2, 2, DATE_TRUNC, (s) =>
    typed(pg.cast(pg.func('date_trunc', [pg.literal(truncPart(s, 1)), s.arg(0).sql]), 'date'), scalar('DATE')),
  ),
  timestamp_sub: def(2, 2, {}, (s) => typed(pg.op('-', asTimestamp(s.arg(0)), s.arg(1).sql), TIMESTAMP)),
  timestamp_add: def(2, 2, {}, (s) => typed(pg.op('+', asTimestamp(s.arg(0)), s.arg(1).sql), TIMESTAMP)),
  timestamp_diff: def(3, 3, { trunc: SCALAR }, (s) => {
    const part = truncPart(s, 2);
    const seconds = { microseconds: 1e-6, milliseconds: 1e-3, second: 1, minute: 60, hour: 3600, day: 86400 }[part];
    if (seconds === undefined) throw new SqlUnsupportedError(`TIMESTAMP_DIFF by ${s.word(2)} is not supported`, s.text, s.call.args[2].pos);
    const diff = pg.op('-', pg.extract('epoch', asTimestamp(s.arg(0))), pg.extract('epoch', asTimestamp(s.arg(1))));
    return typed(pg.cast(pg.func('trunc', [pg.op('/', diff, pg.number(String(seconds)))]), 'bigint'), INT64);
  }),
  // DATETIME(ts, 'UTC'): the wall clock in that zone, computed by timezone() and so independent of the session zone.
  datetime: def(1, 2, {}, (s) => {
    const v = s.arg(0);
    if (isScalar(v.type, 'STRING') && s.call.args.length === 1) return typed(pg.cast(v.sql, 'timestamp'), scalar('DATETIME'));
    const zone = s.call.args.length > 1 ? asText(s.arg(1)) : pg.literal('UTC');
    return typed(pg.atZone(zone, asTimestamp(v)), scalar('DATETIME'));
  }),
  timestamp: def(1, 2, {}, (s) => {
    const v = s.arg(0);
    if (s.call.args.length === 1) return typed(asTimestamp(v), TIMESTAMP);
    const wall = isScalar(v.type, 'STRING') ? pg.cast(v.sql, 'timestamp') : v.sql;
    return typed(pg.atZone(asText(s.arg(1)), wall), TIMESTAMP);
  }),
  date: def(1, 1, {}, (s) => {
    const v = s.arg(0);
    return typed(isScalar(v.type, 'TIMESTAMP') ? pg.cast(pg.atUtc(v.sql), 'date') : pg.cast(v.sql, 'date'), scalar('DATE'));
  }),
  // to_timestamp reads the text as session-local wall clock; ::timestamp gives back that wall clock, read as UTC.
  parse_timestamp: def(2, 2, { to_timestamp: SCALAR }, (s) =>
    typed(pg.atUtc(pg.cast(pg.func('to_timestamp', [asText(s.arg(1)), pg.literal(toPgFormat(s, 0))]), 'timestamp')), TIMESTAMP),
  ),
  format_timestamp: def(2, 3, { to_char: PARTIAL }, (s) => {
    const zone = s.call.args.length > 2 ? asText(s.arg(2)) : pg.literal('UTC');
    return fn('to_char', [pg.atZone(zone, asTimestamp(s.arg(1))), pg.literal(toPgFormat(s, 0))], STRING);
  }),
  unix_seconds: unixFrom('seconds'),
  unix_millis: unixFrom('millis'),
  unix_micros: unixFrom('micros'),
  timestamp_seconds: timestampFrom('seconds'),
  timestamp_millis: timestampFrom('millis'),
  timestamp_micros: timestampFrom('micros'),

  // ── JSON ──
  json_value: jsonExtract(true),
  json_extract_scalar: jsonExtract(true),
  json_query: jsonExtract(false),
  json_extract: jsonExtract(false),

  // ── numbers ──
  abs: def(1, 1, { abs: SCALAR }, (s) => fn('abs', [s.arg(0).sql], s.arg(0).type)),
  round: def(1, 2, { round: SCALAR }, (s) => {
    const v = s.arg(0);
    // round(double precision, int) does not exist in Postgres; numeric rounds half away from zero, like BigQuery.
    const rounded = pg.func('round', [pg.cast(v.sql, 'numeric'), ...(s.call.args.length > 1 ? [pg.cast(s.arg(1).sql, 'integer')] : [])]);
    return isScalar(v.type, 'NUMERIC') ? typed(rounded, v.type) : typed(pg.cast(rounded, 'float8'), FLOAT64);
  }),
  floor: def(1, 1, { floor: SCALAR }, (s) => fn('floor', [s.arg(0).sql], FLOAT64)),
  ceil: def(1, 1, { ceil: SCALAR }, (s) => fn('ceil', [s.arg(0).sql], FLOAT64)),
  greatest: variadic('greatest', MIN_MAX, 1, 100),
  least: variadic('least', MIN_MAX, 1, 100),
};
