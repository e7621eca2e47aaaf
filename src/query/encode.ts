/**
 * Row encoding (docs/API.md, "Row encoding"), the way the original BigQuery-backed service answers:
 * TIMESTAMP (timestamptz) as integer unix microseconds, DATETIME (timestamp) as a zone-less
 * ISO string, INT64/FLOAT64/NUMERIC as numbers, records as stored JSON.
 *
 * Values arrive as Postgres text (see RAW_TYPES): pg's default Date parsing would drop
 * microseconds, and int8 would arrive as a string.
 */
import pg from 'pg';

const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  text: 25,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  jsonb: 3802,
  boolArray: 1000,
  byteaArray: 1001,
  int2Array: 1005,
  int4Array: 1007,
  textArray: 1009,
  int8Array: 1016,
  float4Array: 1021,
  float8Array: 1022,
  timestampArray: 1115,
  timeArray: 1183,
  timestamptzArray: 1185,
  numericArray: 1231,
  jsonbArray: 3807,
  tsrange: 3908,
  tsrangeArray: 3909,
  tstzrange: 3910,
  tstzrangeArray: 3911,
  daterange: 3912,
  daterangeArray: 3913,
} as const;

/** Hands every value to the encoder as text; the encoder decides by column type. */
export const RAW_TYPES = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig;

type Decode = (text: string) => unknown;

/** `2026-11-22 13:00:00.123456+00` → 1795352400123456 (unix µs). */
export function timestamptzToMicros(text: string): number | string {
  const m = /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?([+-]\d{2})(?::(\d{2}))?(?::(\d{2}))?( BC)?$/.exec(text);
  if (!m) return text; // infinity, -infinity, or BC dates: no microsecond integer to give
  const [, y, mo, d, h, mi, s, frac = '', oh, om = '0', os = '0', bc] = m;
  if (bc) return text;
  const utcMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const sign = oh.startsWith('-') ? -1 : 1;
  const offsetSeconds = sign * (Math.abs(Number(oh)) * 3600 + Number(om) * 60 + Number(os));
  return (utcMs / 1000 - offsetSeconds) * 1_000_000 + Number(frac.padEnd(6, '0'));
}

/** `2026-11-22 13:00:00.25` → `2026-11-22T13:00:00.25` (Postgres already drops trailing zeros). */
function timestampToIso(text: string): string {
  return text.replace(' ', 'T');
}

function toNumber(text: string): number | string {
  const n = Number(text);
  return Number.isFinite(n) ? n : text; // NaN and Infinity have no JSON number: BigQuery sends them as strings
}

/** `\\x6869` → `aGk=`: BYTES as base64, as BigQuery's API sends them. */
const byteaToBase64: Decode = (t) => Buffer.from(t.slice(2), 'hex').toString('base64');

/**
 * A RANGE (`daterange`, `tsrange`, `tstzrange`: `["2020-01-01 10:00:00",)`) as BigQuery's API
 * sends one, a string `[start, end)` with `UNBOUNDED` for an infinite bound, each bound encoded as
 * its type is in a row: `[2020-01-01, UNBOUNDED)`, `[2020-01-01T10:00:00, 2020-01-02T00:00:00)`,
 * TIMESTAMP bounds as unix microseconds.
 */
function rangeOf(bound: (text: string) => unknown): Decode {
  return (text) => {
    if (!/^[[(].*[\])]$/.test(text)) return text; // `empty`: the translator never makes one
    const bounds: (string | null)[] = [];
    let i = 1;
    for (const end of [',', text.at(-1)]) {
      let value = '';
      let quoted = false;
      if (text[i] === '"') {
        quoted = true;
        for (i++; i < text.length && text[i] !== '"'; i++) value += text[i] === '\\' ? text[++i] : text[i];
        i++;
      } else {
        for (; i < text.length - 1 && text[i] !== end; i++) value += text[i];
      }
      bounds.push(value === '' && !quoted ? null : value);
      i++; // the comma, then the closing bracket
    }
    const [lower, upper] = bounds.map((b) => (b === null ? 'UNBOUNDED' : String(bound(b))));
    return `[${lower}, ${upper})`;
  };
}
const dateRange = rangeOf((t) => t);
const datetimeRange = rangeOf((t) => timestampToIso(t));
const timestampRange = rangeOf(timestamptzToMicros);

/** The encoding of a RANGE column, and of an array of them, by BigQuery type name (for tests that read Postgres text). */
export function rangeEncoder(type: string): ((text: string) => unknown) | undefined {
  const element = /^(ARRAY<)?RANGE<(DATE|DATETIME|TIMESTAMP)>>?$/.exec(type);
  if (!element) return undefined;
  const one = element[2] === 'DATE' ? dateRange : element[2] === 'DATETIME' ? datetimeRange : timestampRange;
  return element[1] ? arrayOf(one) : one;
}

const parseBool: Decode = (t) => t === 't' || t === 'true';
const parseTextArray = (pg.types.getTypeParser as (oid: number) => (t: string) => (string | null)[])(OID.textArray);

function arrayOf(element: Decode): Decode {
  return (text) => parseTextArray(text).map((v) => (v === null ? null : element(v)));
}

const DECODERS: Record<number, Decode> = {
  [OID.bool]: parseBool,
  [OID.bytea]: byteaToBase64,
  [OID.byteaArray]: arrayOf(byteaToBase64),
  [OID.int2]: toNumber,
  [OID.int4]: toNumber,
  [OID.int8]: toNumber,
  [OID.oid]: toNumber,
  [OID.float4]: toNumber,
  [OID.float8]: toNumber,
  [OID.numeric]: toNumber,
  [OID.json]: JSON.parse,
  [OID.jsonb]: JSON.parse,
  [OID.timestamptz]: timestamptzToMicros,
  [OID.timestamp]: timestampToIso,
  [OID.boolArray]: arrayOf(parseBool),
  [OID.int2Array]: arrayOf(toNumber),
  [OID.int4Array]: arrayOf(toNumber),
  [OID.int8Array]: arrayOf(toNumber),
  [OID.float4Array]: arrayOf(toNumber),
  [OID.float8Array]: arrayOf(toNumber),
  [OID.numericArray]: arrayOf(toNumber),
  [OID.timestamptzArray]: arrayOf(timestamptzToMicros),
  [OID.timestampArray]: arrayOf(timestampToIso),
  // TIME (1083) is sent as Postgres prints it, `15:30:00`; an array of them as strings.
  [OID.timeArray]: parseTextArray,
  [OID.jsonbArray]: arrayOf(JSON.parse),
  [OID.textArray]: parseTextArray,
  [OID.daterange]: dateRange,
  [OID.tsrange]: datetimeRange,
  [OID.tstzrange]: timestampRange,
  [OID.daterangeArray]: arrayOf(dateRange),
  [OID.tsrangeArray]: arrayOf(datetimeRange),
  [OID.tstzrangeArray]: arrayOf(timestampRange),
};

const identity: Decode = (t) => t;

/**
 * Rows (arrays of Postgres text) → objects keyed by the BigQuery column names.
 * A name that appears twice keeps its last value, as object keys must be unique.
 */
export function encodeRows(
  fields: ReadonlyArray<{ name: string; dataTypeID: number }>,
  names: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | null>>,
): Record<string, unknown>[] {
  const keys = fields.map((f, i) => names[i] ?? f.name);
  const decoders = fields.map((f) => DECODERS[f.dataTypeID] ?? identity);
  return rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const v = row[i];
      out[keys[i]] = v === null || v === undefined ? null : decoders[i](v);
    }
    return out;
  });
}

/** Columns whose Postgres text is already the JSON to send (json keeps valid input text; jsonb prints normalised JSON). */
const RAW_JSON = new Set<number>([OID.json, OID.jsonb]);

/**
 * The response body `{"result": [rows]}` as text, the same JSON values as
 * `JSON.stringify({ result: encodeRows(...) })`, without parsing and re-printing JSON columns:
 * `metadata` (~1.5 KB a row) is copied through as Postgres printed it, so the 100 rows of
 * `logs.all` cost no JSON.parse/stringify of their records. Redaction needs the values, so the
 * caller uses encodeRows for redacted answers.
 */
export function encodeResultBody(
  fields: ReadonlyArray<{ name: string; dataTypeID: number }>,
  names: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | null>>,
): string {
  // A name given twice would appear twice in the object; encodeRows keeps the last one: so do we.
  const keys = fields.map((f, i) => names[i] ?? f.name);
  const last = new Map(keys.map((k, i) => [k, i]));
  const columns = keys.flatMap((key, i) => (last.get(key) === i ? [i] : []));
  const prefixes = columns.map((i, n) => `${n === 0 ? '{' : ','}${JSON.stringify(keys[i])}:`);
  const emit = columns.map((i) => {
    const type = fields[i].dataTypeID;
    if (RAW_JSON.has(type)) return (text: string) => text;
    const decode = DECODERS[type] ?? identity;
    return (text: string) => JSON.stringify(decode(text));
  });
  const parts: string[] = ['{"result":['];
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    let out = r === 0 ? '' : ',';
    for (let n = 0; n < columns.length; n++) {
      const v = row[columns[n]];
      out += prefixes[n] + (v === null || v === undefined ? 'null' : emit[n](v));
    }
    parts.push(columns.length ? out + '}' : out + '{}');
  }
  parts.push(']}');
  return parts.join('');
}
