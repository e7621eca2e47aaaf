/**
 * Date, DATETIME and TIMESTAMP functions (BigQuery's date, datetime and timestamp references).
 * A TIMESTAMP is an instant, read and truncated in UTC unless the call names a zone; DATE and
 * DATETIME are wall clocks (Postgres `date` and `timestamp`), never touched by the session zone.
 *
 * Parts follow BigQuery: WEEK starts on Sunday, WEEK(<WEEKDAY>) on that day, ISOWEEK on Monday,
 * ISOYEAR on the Monday of the ISO year's first week. The *_DIFF functions of DATE and DATETIME
 * count part boundaries between the two values; TIMESTAMP_DIFF counts whole elapsed parts.
 */
import { asNumber, asText, asTimestamp } from '../coerce.js';
import { SqlSyntaxError, SqlUnsupportedError } from '../errors.js';
import type { CallSite, Emits, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL, SCALAR, TOTAL, scalar as scalarFacts } from '../postgres/facts.js';
import { INT64, STRING, TIME, TIMESTAMP, isScalar, scalar, typed, type BqType, type Typed } from '../types.js';
import { def, fn, refuseHugeArray, wrongType } from './define.js';

const DATE = scalar('DATE');
const DATETIME = scalar('DATETIME');
const INTERVAL = scalar('INTERVAL');

/** A date part as a call names it: the Postgres unit, or a week starting on `weekday` (0 = Sunday), or an ISO year. */
type Part =
  | { readonly kind: 'unit'; readonly unit: string; readonly seconds?: number }
  | { readonly kind: 'week'; readonly weekday: number }
  | { readonly kind: 'isoweek' }
  | { readonly kind: 'isoyear' };

const UNITS: Readonly<Record<string, Part>> = {
  MICROSECOND: { kind: 'unit', unit: 'microseconds', seconds: 1e-6 },
  MILLISECOND: { kind: 'unit', unit: 'milliseconds', seconds: 1e-3 },
  SECOND: { kind: 'unit', unit: 'second', seconds: 1 },
  MINUTE: { kind: 'unit', unit: 'minute', seconds: 60 },
  HOUR: { kind: 'unit', unit: 'hour', seconds: 3600 },
  DAY: { kind: 'unit', unit: 'day', seconds: 86400 },
  WEEK: { kind: 'week', weekday: 0 },
  ISOWEEK: { kind: 'isoweek' },
  MONTH: { kind: 'unit', unit: 'month' },
  QUARTER: { kind: 'unit', unit: 'quarter' },
  YEAR: { kind: 'unit', unit: 'year' },
  ISOYEAR: { kind: 'isoyear' },
};
const WEEKDAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];
const DATE_PARTS = new Set(['DAY', 'WEEK', 'ISOWEEK', 'MONTH', 'QUARTER', 'YEAR', 'ISOYEAR']);

/** The i-th argument as a date part: a word (`HOUR`) or `WEEK(MONDAY)`; `dateOnly` refuses parts smaller than a day. */
export function datePart(site: CallSite, i: number, dateOnly = false): Part {
  const a = site.call.args[i];
  if (a?.kind === 'call' && a.name === 'week' && a.args.length === 1 && a.args[0].kind === 'path' && a.args[0].parts.length === 1) {
    const weekday = WEEKDAYS.indexOf(a.args[0].parts[0].toUpperCase());
    if (weekday < 0) throw new SqlSyntaxError(`WEEK(…) takes a weekday such as MONDAY`, site.text, a.args[0].pos);
    return { kind: 'week', weekday };
  }
  const word = site.word(i);
  const part = UNITS[word];
  if (!part || (dateOnly && !DATE_PARTS.has(word)))
    throw new SqlUnsupportedError(`date part ${word} is not valid here`, site.text, site.call.args[i].pos);
  return part;
}

const days = (n: PgExpr): PgExpr => pg.op('*', pg.cast(n, 'integer'), pg.cast(pg.literal('1 day'), 'interval'));

/** A wall clock (Postgres `timestamp`) truncated to `part`. */
function truncWall(wall: PgExpr, part: Part): PgExpr {
  switch (part.kind) {
    case 'unit':
      return pg.func('date_trunc', [pg.literal(part.unit), wall]);
    case 'isoweek':
      return pg.func('date_trunc', [pg.literal('week'), wall]);
    case 'week': {
      // Back to the last `weekday`: (dow - weekday + 7) mod 7 days before the day's midnight.
      const back = pg.func('mod', [
        pg.op('+', pg.op('-', pg.extract('dow', wall), pg.number(String(part.weekday))), pg.number('7')),
        pg.number('7'),
      ]);
      return pg.op('-', pg.func('date_trunc', [pg.literal('day'), wall]), days(back));
    }
    case 'isoyear': {
      // The Monday of the week holding January 4th of the ISO year.
      const jan4 = pg.func('make_date', [pg.cast(pg.extract('isoyear', wall), 'integer'), pg.number('1'), pg.number('4')]);
      return pg.func('date_trunc', [pg.literal('week'), pg.cast(jan4, 'timestamp')]);
    }
  }
}

/**
 * Fixed-length parts of a TIMESTAMP in UTC, truncated by `date_bin(stride, ts, origin)`: whole
 * strides from a UTC midnight (weeks from a Sunday). perf: arithmetic on the instant, where
 * `date_trunc(part, ts, 'UTC')` converts to and from the zone for every row (an edge chart per
 * minute over 6 h: 6.4 → 4.7 ms; BENCHMARKS.md, "Hot leaves"). It fails only past the year
 * 294,000; BigQuery's TIMESTAMPs end at 9999, so it is as total as date_trunc.
 */
const BIN_STRIDES: Readonly<Record<string, { stride: string; origin: string }>> = {
  microseconds: { stride: '1 microsecond', origin: '1970-01-01 00:00:00+00' },
  milliseconds: { stride: '1 millisecond', origin: '1970-01-01 00:00:00+00' },
  second: { stride: '1 second', origin: '1970-01-01 00:00:00+00' },
  minute: { stride: '1 minute', origin: '1970-01-01 00:00:00+00' },
  hour: { stride: '1 hour', origin: '1970-01-01 00:00:00+00' },
  day: { stride: '1 day', origin: '1970-01-01 00:00:00+00' },
};
const SUNDAY_ORIGIN = '1970-01-04 00:00:00+00';

/** A TIMESTAMP truncated to `part` in `zone` (UTC when undefined): date_bin in UTC for fixed lengths, else through the zone's wall clock. */
function truncTimestamp(ts: PgExpr, part: Part, zone: PgExpr | undefined): PgExpr {
  if (!zone) {
    const bin =
      part.kind === 'unit'
        ? BIN_STRIDES[part.unit]
        : part.kind === 'week' && part.weekday === 0
          ? { stride: '7 days', origin: SUNDAY_ORIGIN }
          : undefined;
    if (bin) return pg.func('date_bin', [pg.cast(pg.literal(bin.stride), 'interval'), ts, pg.cast(pg.literal(bin.origin), 'timestamptz')]);
  }
  const z = zone ?? pg.literal('UTC');
  return pg.atZone(z, truncWall(pg.atZone(z, ts), part));
}

/** Boundaries of `part` between two wall clocks (`a - b`), as BigQuery's DATE_DIFF / DATETIME_DIFF count them. */
function boundaries(a: PgExpr, b: PgExpr, part: Part): PgExpr {
  const calendar = (unit: string, perYear: number): PgExpr => {
    const index = (w: PgExpr): PgExpr => pg.op('+', pg.op('*', pg.extract('year', w), pg.number(String(perYear))), pg.extract(unit, w));
    return pg.op('-', index(a), index(b));
  };
  if (part.kind === 'unit' && part.unit === 'month') return pg.cast(calendar('month', 12), 'bigint');
  if (part.kind === 'unit' && part.unit === 'quarter') return pg.cast(calendar('quarter', 4), 'bigint');
  if (part.kind === 'unit' && part.unit === 'year') return pg.cast(pg.op('-', pg.extract('year', a), pg.extract('year', b)), 'bigint');
  if (part.kind === 'isoyear') return pg.cast(pg.op('-', pg.extract('isoyear', a), pg.extract('isoyear', b)), 'bigint');
  const seconds = part.kind === 'unit' ? part.seconds! : 604800;
  const span = pg.op('-', pg.extract('epoch', truncWall(a, part)), pg.extract('epoch', truncWall(b, part)));
  // extract(epoch) is numeric, so the quotient of two truncated values is exact.
  return pg.cast(pg.op('/', span, pg.number(String(seconds))), 'bigint');
}

/** A value as a wall clock: DATE at midnight, DATETIME as it is, a STRING read as a DATETIME. */
function asWall(v: Typed): PgExpr {
  if (isScalar(v.type, 'DATE', 'STRING', 'NULL')) return pg.cast(v.sql, 'timestamp');
  if (isScalar(v.type, 'TIMESTAMP')) return pg.atUtc(v.sql);
  return v.sql;
}

function asDate(v: Typed): PgExpr {
  if (isScalar(v.type, 'TIMESTAMP')) return pg.cast(pg.atUtc(v.sql), 'date');
  return isScalar(v.type, 'DATE') ? v.sql : pg.cast(v.sql, 'date');
}

/** The i-th argument as an INTERVAL (`INTERVAL 5 DAY`); anything else is a 400 naming it. */
function interval(site: CallSite, i: number): PgExpr {
  const v = site.arg(i);
  if (!isScalar(v.type, 'INTERVAL'))
    throw new SqlSyntaxError('expected an INTERVAL such as INTERVAL 1 DAY', site.text, site.call.args[i].pos);
  return v.sql;
}

/** strftime elements of BigQuery's FORMAT_* / PARSE_* and their to_char / to_timestamp equivalents. */
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
  x: 'MM/DD/YY',
  X: 'HH24:MI:SS',
  y: 'YY',
  C: 'CC',
  j: 'DDD',
  b: 'Mon',
  h: 'Mon',
  B: 'FMMonth',
  a: 'Dy',
  A: 'FMDay',
  p: 'AM',
  I: 'HH12',
  e: 'FMDD',
  u: 'ID',
  G: 'IYYY',
  g: 'IY',
  V: 'IW',
  Q: 'Q',
  Z: '"UTC"',
  z: '"+0000"',
  s: '"SECONDS"',
  '%': '%',
  'E*S': 'SS.US',
  E6S: 'SS.US',
  E3S: 'SS.MS',
  R: 'HH24:MI',
  c: 'Dy Mon FMDD HH24:MI:SS YYYY',
};
/** Elements that only mean something for a time of day, refused for DATE. */
const TIME_ELEMENTS = new Set(['H', 'M', 'S', 'T', 'X', 'p', 'I', 'R', 'E*S', 'E6S', 'E3S', 'c', 'Z', 'z', 's']);

/** A format string literal as a to_char pattern; `%s` (epoch seconds) is a marker the caller replaces. */
function toPgFormat(site: CallSite, i: number, date = false): string {
  const format = site.stringLiteral(i);
  if (format === undefined) throw new SqlUnsupportedError('the format must be a string literal', site.text, site.call.args[i].pos);
  let out = '';
  let literal = '';
  const flush = (): void => {
    if (literal) out += `"${literal.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    literal = '';
  };
  for (let k = 0; k < format.length; k++) {
    if (format[k] !== '%') {
      literal += format[k];
      continue;
    }
    const element = ['E*S', 'E6S', 'E3S'].find((e) => format.startsWith(e, k + 1)) ?? format[k + 1] ?? '';
    const mapped = FORMAT_ELEMENTS[element];
    if (mapped === undefined || (date && TIME_ELEMENTS.has(element)))
      throw new SqlUnsupportedError(
        `format element %${element} is not supported${date ? ' for a DATE' : ''}`,
        site.text,
        site.call.args[i].pos,
      );
    flush();
    out += mapped === '%' ? '"%"' : mapped;
    k += element.length;
  }
  flush();
  return out;
}

/** Formats a wall clock; a `%s` in the format is the instant's Unix seconds. */
function format(site: CallSite, wall: PgExpr, instant: PgExpr, date = false): Typed {
  const pattern = toPgFormat(site, 0, date);
  const parts = pattern.split('"SECONDS"');
  const pieces: PgExpr[] = [];
  parts.forEach((p, k) => {
    if (k > 0) pieces.push(pg.cast(pg.cast(pg.func('floor', [pg.extract('epoch', instant)]), 'bigint'), 'text'));
    if (p) pieces.push(pg.func('to_char', [wall, pg.literal(p)]));
  });
  return typed(pieces.length ? pieces.reduce((x, y) => pg.op('||', x, y)) : pg.literal(''), STRING);
}

/** to_timestamp reads the text as session-local wall clock; `::timestamp` gives back that wall clock. */
function parseWall(site: CallSite): PgExpr {
  return pg.cast(pg.func('to_timestamp', [asText(site.arg(1)), pg.literal(toPgFormat(site, 0))]), 'timestamp');
}

/** The optional time zone argument at `i`. */
const zoneAt = (site: CallSite, i: number): PgExpr | undefined => (site.call.args.length > i ? asText(site.arg(i)) : undefined);

const DATE_TRUNC: Emits = { date_trunc: TOTAL, mod: SCALAR, make_date: SCALAR };
const NOW: Emits = { now: SCALAR };
/** make_timestamp and the migration's array generators: strict, and they fail on a bad value (a zero step). */
const STRICT_PARTIAL = scalarFacts({ mayFail: true, strict: true, evaluatesAllArguments: true });

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

/** DATE_ADD / DATETIME_ADD and their _SUB: the value plus or minus an INTERVAL, in the value's type. */
function shift(op: '+' | '-', type: BqType): FunctionDef {
  return def(2, 2, {}, (s) => {
    const v = s.arg(0);
    const moved = pg.op(op, type === DATE ? asDate(v) : asWall(v), interval(s, 1));
    return typed(type === DATE ? pg.cast(moved, 'date') : moved, type);
  });
}

/** JUSTIFY_DAYS / JUSTIFY_HOURS / JUSTIFY_INTERVAL: Postgres' functions of those names, which normalise as BigQuery's do. */
function justify(name: string): FunctionDef {
  return def(1, 1, { [name]: STRICT_PARTIAL }, (s) => fn(name, [interval(s, 0)], INTERVAL));
}

/** GENERATE_DATE_ARRAY / GENERATE_TIMESTAMP_ARRAY (migrations/1764200000000_bigquery-library-functions.js). */
function generateTimes(name: string, element: BqType, fixedOnly: boolean): FunctionDef {
  return def(fixedOnly ? 3 : 2, 3, { [name]: STRICT_PARTIAL }, (s) => {
    refuseHugeArray(s, 86400);
    const step = s.call.args.length > 2 ? interval(s, 2) : pg.cast(pg.literal('1 day'), 'interval');
    const interval2 = s.call.args[2];
    if (
      fixedOnly &&
      interval2?.kind === 'interval' &&
      !['MICROSECOND', 'MILLISECOND', 'SECOND', 'MINUTE', 'HOUR', 'DAY'].includes(interval2.unit)
    )
      throw new SqlUnsupportedError('GENERATE_TIMESTAMP_ARRAY steps by MICROSECOND to DAY', s.text, interval2.pos);
    const bound = (i: number): PgExpr => (element === DATE ? asDate(s.arg(i)) : asTimestamp(s.arg(i)));
    return typed(pg.func(name, [bound(0), bound(1), step]), { kind: 'array', element });
  });
}

// ── TIME ──

/** The parts of a time of day: TIME_ADD, TIME_SUB, TIME_DIFF and TIME_TRUNC take no others. */
const TIME_UNITS = new Set(['MICROSECOND', 'MILLISECOND', 'SECOND', 'MINUTE', 'HOUR']);

/** The i-th argument as a TIME: a TIME, or a STRING (or parameter) read as one. */
function timeArg(site: CallSite, i: number): PgExpr {
  const v = site.arg(i);
  if (isScalar(v.type, 'TIME')) return v.sql;
  if (isScalar(v.type, 'STRING', 'NULL') || v.param) return pg.cast(v.sql, 'time');
  return wrongType(site, i, 'TIME');
}

/** A time of day as the wall clock of 1970-01-01, for the wall-clock helpers (truncation, boundaries, to_char). */
const onEpochDay = (time: PgExpr): PgExpr => pg.op('+', pg.cast(pg.literal('1970-01-01'), 'date'), time);

/** A part of a time of day (`HOUR`), refused when larger (BigQuery's TIME functions take none). */
function timePart(site: CallSite, i: number): Part {
  const word = site.word(i);
  if (!TIME_UNITS.has(word)) throw new SqlSyntaxError(`date part ${word} is not valid for a TIME`, site.text, site.call.args[i].pos);
  return UNITS[word];
}

/**
 * TIME_ADD / TIME_SUB: Postgres' `time ± interval` keeps the time of day and wraps around
 * midnight, as BigQuery's does (`23:30:00` plus an hour is `00:30:00`). The interval must be of a
 * part of a day, as BigQuery requires.
 */
function shiftTime(op: '+' | '-'): FunctionDef {
  return def(2, 2, {}, (s) => {
    const a = s.call.args[1];
    if (a.kind === 'interval' && !TIME_UNITS.has(a.unit))
      throw new SqlSyntaxError(`a TIME moves by MICROSECOND to HOUR, not ${a.unit}`, s.text, a.pos);
    return typed(pg.op(op, timeArg(s, 0), interval(s, 1)), TIME);
  });
}

export const DATETIME_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  current_timestamp: def(0, 0, NOW, () => fn('now', [], TIMESTAMP)),
  current_datetime: def(0, 1, NOW, (s) => typed(pg.atZone(zoneAt(s, 0) ?? pg.literal('UTC'), pg.func('now', [])), DATETIME)),
  current_date: def(0, 1, NOW, (s) => typed(pg.cast(pg.atZone(zoneAt(s, 0) ?? pg.literal('UTC'), pg.func('now', [])), 'date'), DATE)),

  // ── truncation ──
  timestamp_trunc: def(2, 3, { ...DATE_TRUNC, date_bin: TOTAL }, (s) =>
    typed(truncTimestamp(asTimestamp(s.arg(0)), datePart(s, 1), zoneAt(s, 2)), TIMESTAMP),
  ),
  datetime_trunc: def(2, 2, DATE_TRUNC, (s) => typed(truncWall(asWall(s.arg(0)), datePart(s, 1)), DATETIME)),
  date_trunc: def(2, 2, { ...DATE_TRUNC, date_bin: TOTAL }, (s) => {
    const v = s.arg(0);
    if (isScalar(v.type, 'TIMESTAMP')) return typed(truncTimestamp(v.sql, datePart(s, 1), undefined), TIMESTAMP);
    if (isScalar(v.type, 'DATETIME')) return typed(truncWall(v.sql, datePart(s, 1)), DATETIME);
    return typed(pg.cast(truncWall(asWall(v), datePart(s, 1, true)), 'date'), DATE);
  }),

  // ── arithmetic ──
  timestamp_add: def(2, 2, {}, (s) => typed(pg.op('+', asTimestamp(s.arg(0)), interval(s, 1)), TIMESTAMP)),
  timestamp_sub: def(2, 2, {}, (s) => typed(pg.op('-', asTimestamp(s.arg(0)), interval(s, 1)), TIMESTAMP)),
  datetime_add: shift('+', DATETIME),
  datetime_sub: shift('-', DATETIME),
  date_add: shift('+', DATE),
  date_sub: shift('-', DATE),
  timestamp_diff: def(3, 3, { trunc: SCALAR }, (s) => {
    const part = datePart(s, 2);
    if (part.kind !== 'unit' || part.seconds === undefined)
      throw new SqlUnsupportedError(`TIMESTAMP_DIFF by ${s.word(2)} is not supported (nor by BigQuery)`, s.text, s.call.args[2].pos);
    const diff = pg.op('-', pg.extract('epoch', asTimestamp(s.arg(0))), pg.extract('epoch', asTimestamp(s.arg(1))));
    return typed(pg.cast(pg.func('trunc', [pg.op('/', diff, pg.number(String(part.seconds)))]), 'bigint'), INT64);
  }),
  datetime_diff: def(3, 3, DATE_TRUNC, (s) => typed(boundaries(asWall(s.arg(0)), asWall(s.arg(1)), datePart(s, 2)), INT64)),
  date_diff: def(3, 3, DATE_TRUNC, (s) =>
    typed(boundaries(pg.cast(asDate(s.arg(0)), 'timestamp'), pg.cast(asDate(s.arg(1)), 'timestamp'), datePart(s, 2, true)), INT64),
  ),
  last_day: def(1, 2, DATE_TRUNC, (s) => {
    const part = s.call.args.length > 1 ? datePart(s, 1, true) : UNITS.MONTH;
    if (part.kind === 'isoyear') throw new SqlUnsupportedError('LAST_DAY by ISOYEAR is not supported', s.text, s.call.args[1].pos);
    const length = part.kind === 'week' || part.kind === 'isoweek' ? '7 days' : part.unit === 'quarter' ? '3 months' : `1 ${part.unit}`;
    const next = pg.op('+', truncWall(asWall(s.arg(0)), part), pg.cast(pg.literal(length), 'interval'));
    return typed(pg.cast(pg.op('-', next, pg.cast(pg.literal('1 day'), 'interval')), 'date'), DATE);
  }),

  // ── construction and conversion ──
  // DATETIME(ts, zone): the wall clock in that zone, computed by timezone() and so independent of the session zone.
  datetime: def(1, 6, { make_timestamp: STRICT_PARTIAL }, (s) => {
    const n = s.call.args.length;
    if (n === 6)
      return typed(
        pg.func(
          'make_timestamp',
          [0, 1, 2, 3, 4].map((i) => pg.cast(asNumber(s.arg(i)), 'integer')).concat(pg.cast(asNumber(s.arg(5)), 'float8')),
        ),
        DATETIME,
      );
    if (n > 2) throw new SqlSyntaxError('DATETIME takes 1, 2 or 6 arguments', s.text, s.call.pos);
    const v = s.arg(0);
    if (n === 1 && !isScalar(v.type, 'TIMESTAMP')) return typed(asWall(v), DATETIME);
    return typed(pg.atZone(zoneAt(s, 1) ?? pg.literal('UTC'), asTimestamp(v)), DATETIME);
  }),
  timestamp: def(1, 2, {}, (s) => {
    const v = s.arg(0);
    if (s.call.args.length === 1) return typed(asTimestamp(v), TIMESTAMP);
    return typed(pg.atZone(asText(s.arg(1)), asWall(v)), TIMESTAMP);
  }),
  date: def(1, 3, { make_date: SCALAR }, (s) => {
    const n = s.call.args.length;
    if (n === 3)
      return fn(
        'make_date',
        [0, 1, 2].map((i) => pg.cast(asNumber(s.arg(i)), 'integer')),
        DATE,
      );
    const v = s.arg(0);
    if (n === 2) return typed(pg.cast(pg.atZone(asText(s.arg(1)), asTimestamp(v)), 'date'), DATE);
    return typed(asDate(v), DATE);
  }),
  unix_date: def(1, 1, {}, (s) => typed(pg.cast(pg.op('-', asDate(s.arg(0)), pg.cast(pg.literal('1970-01-01'), 'date')), 'bigint'), INT64)),
  date_from_unix_date: def(1, 1, {}, (s) =>
    typed(pg.op('+', pg.cast(pg.literal('1970-01-01'), 'date'), pg.cast(asNumber(s.arg(0)), 'integer')), DATE),
  ),
  unix_seconds: unixFrom('seconds'),
  unix_millis: unixFrom('millis'),
  unix_micros: unixFrom('micros'),
  timestamp_seconds: timestampFrom('seconds'),
  timestamp_millis: timestampFrom('millis'),
  timestamp_micros: timestampFrom('micros'),
  timestamp_from_unix_seconds: timestampFrom('seconds'),
  timestamp_from_unix_millis: timestampFrom('millis'),
  timestamp_from_unix_micros: timestampFrom('micros'),

  // ── formatting and parsing ──
  format_timestamp: def(2, 3, { to_char: PARTIAL, floor: SCALAR }, (s) => {
    const ts = asTimestamp(s.arg(1));
    return format(s, pg.atZone(zoneAt(s, 2) ?? pg.literal('UTC'), ts), ts);
  }),
  format_datetime: def(2, 2, { to_char: PARTIAL, floor: SCALAR }, (s) => {
    const wall = asWall(s.arg(1));
    return format(s, wall, pg.atUtc(wall));
  }),
  format_date: def(2, 2, { to_char: PARTIAL, floor: SCALAR }, (s) => {
    const wall = pg.cast(asDate(s.arg(1)), 'timestamp');
    return format(s, wall, pg.atUtc(wall), true);
  }),
  parse_timestamp: def(2, 3, { to_timestamp: SCALAR }, (s) => typed(pg.atZone(zoneAt(s, 2) ?? pg.literal('UTC'), parseWall(s)), TIMESTAMP)),
  parse_datetime: def(2, 2, { to_timestamp: SCALAR }, (s) => typed(parseWall(s), DATETIME)),
  parse_date: def(2, 2, { to_date: SCALAR }, (s) => fn('to_date', [asText(s.arg(1)), pg.literal(toPgFormat(s, 0))], DATE)),

  // ── TIME ──
  current_time: def(0, 1, NOW, (s) => typed(pg.cast(pg.atZone(zoneAt(s, 0) ?? pg.literal('UTC'), pg.func('now', [])), 'time'), TIME)),
  // TIME(hour, minute, second), TIME(timestamp[, zone]) (the time of day in that zone, UTC by default), TIME(datetime).
  time: def(1, 3, { make_time: STRICT_PARTIAL }, (s) => {
    const n = s.call.args.length;
    if (n === 3)
      return fn(
        'make_time',
        [pg.cast(asNumber(s.arg(0)), 'integer'), pg.cast(asNumber(s.arg(1)), 'integer'), pg.cast(asNumber(s.arg(2)), 'float8')],
        TIME,
      );
    const v = s.arg(0);
    if (isScalar(v.type, 'TIMESTAMP', 'STRING') || (n === 2 && v.param))
      return typed(pg.cast(pg.atZone(zoneAt(s, 1) ?? pg.literal('UTC'), asTimestamp(v)), 'time'), TIME);
    if (n === 2) return wrongType(s, 0, 'TIMESTAMP');
    if (isScalar(v.type, 'DATETIME', 'TIME', 'NULL') || v.param) return typed(pg.cast(v.sql, 'time'), TIME);
    return wrongType(s, 0, 'TIMESTAMP, DATETIME or TIME');
  }),
  time_add: shiftTime('+'),
  time_sub: shiftTime('-'),
  // Part boundaries between the two times of day, counted on one day as DATETIME_DIFF counts them.
  time_diff: def(3, 3, DATE_TRUNC, (s) => typed(boundaries(onEpochDay(timeArg(s, 0)), onEpochDay(timeArg(s, 1)), timePart(s, 2)), INT64)),
  time_trunc: def(2, 2, DATE_TRUNC, (s) => typed(pg.cast(truncWall(onEpochDay(timeArg(s, 0)), timePart(s, 1)), 'time'), TIME)),
  format_time: def(2, 2, { to_char: PARTIAL, floor: SCALAR }, (s) => {
    const wall = onEpochDay(timeArg(s, 1));
    return format(s, wall, pg.atUtc(wall));
  }),
  parse_time: def(2, 2, { to_timestamp: SCALAR }, (s) => typed(pg.cast(parseWall(s), 'time'), TIME)),

  // ── intervals ──
  // MAKE_INTERVAL(year, month, day, hour, minute, second): Postgres' make_interval has weeks between months and days.
  make_interval: def(0, 6, { make_interval: STRICT_PARTIAL }, (s) => {
    const part = (i: number, type: 'integer' | 'float8'): PgExpr =>
      i < s.call.args.length ? pg.cast(asNumber(s.arg(i)), type) : pg.number('0');
    const parts = [
      part(0, 'integer'),
      part(1, 'integer'),
      pg.number('0'),
      part(2, 'integer'),
      part(3, 'integer'),
      part(4, 'integer'),
      part(5, 'float8'),
    ];
    return fn('make_interval', parts, INTERVAL);
  }),
  justify_days: justify('justify_days'),
  justify_hours: justify('justify_hours'),
  justify_interval: justify('justify_interval'),

  // ── arrays of times ──
  generate_date_array: generateTimes('logs.bq_date_array', DATE, false),
  generate_timestamp_array: generateTimes('logs.bq_timestamp_array', TIMESTAMP, true),
};
