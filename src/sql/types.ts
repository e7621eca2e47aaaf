/**
 * BigQuery types as the resolver tracks them. JSON-backed values (records and arrays read from
 * `metadata` / `body`) carry their source schema so field access can be typed and checked.
 */
import { mergeFieldMaps, type FieldMap, type FieldSchema } from './catalog.js';
import type { PgExpr } from './postgres/ast.js';

/**
 * TIME is Postgres `time` (a wall clock time of day); JSON is BigQuery's JSON type, held as its
 * compact text with keys sorted (src/sql/library/json.ts), so that an answer carries the JSON
 * text as BigQuery's API sends it.
 */
export type ScalarName =
  | 'STRING'
  | 'BYTES'
  | 'INT64'
  | 'FLOAT64'
  | 'NUMERIC'
  | 'BOOL'
  | 'TIMESTAMP'
  | 'DATETIME'
  | 'DATE'
  | 'TIME'
  | 'INTERVAL'
  | 'JSON'
  | RangeName
  | 'NULL';

/**
 * BigQuery's RANGE<T>: a half-open span `[start, end)` of dates, datetimes or timestamps, held as
 * Postgres `daterange` / `tsrange` / `tstzrange` (always `[)`, never empty; an unbounded end is an
 * infinite bound). A scalar, like BigQuery's: comparable, groupable, orderable (src/sql/library/ranges.ts).
 */
export type RangeName = 'RANGE<DATE>' | 'RANGE<DATETIME>' | 'RANGE<TIMESTAMP>';
export type RangeElement = 'DATE' | 'DATETIME' | 'TIMESTAMP';
export const RANGE_ELEMENTS: readonly RangeElement[] = ['DATE', 'DATETIME', 'TIMESTAMP'];

export type BqType =
  | {
      readonly kind: 'scalar';
      readonly name: ScalarName;
      /** a JSON leaf whose type the schema does not know yet */ readonly loose?: boolean;
    }
  /**
   * A jsonb object (one element of a repeated record); `fields` undefined when the schema knows none.
   * A STRUCT built by the query (`STRUCT(…)`, a table alias as a value) lists its fields in `struct`
   * instead, each with its BigQuery type, so a field read back has the type it was built from.
   */
  | { readonly kind: 'record'; readonly fields?: FieldMap; readonly struct?: readonly StructFieldType[] }
  /** A jsonb array: a repeated record or a repeated scalar. `single`: every record array held exactly one object. */
  | { readonly kind: 'jsonArray'; readonly element: BqType; readonly single: boolean }
  /** A Postgres array (array_agg, approx_quantiles). */
  | { readonly kind: 'array'; readonly element: BqType };

export interface StructFieldType {
  readonly name: string;
  readonly type: BqType;
}

const scalars = new Map<ScalarName, BqType>();
export function scalar(name: ScalarName): BqType {
  let t = scalars.get(name);
  if (!t) scalars.set(name, (t = Object.freeze({ kind: 'scalar', name })));
  return t;
}

export const STRING = scalar('STRING');
export const BYTES = scalar('BYTES');
export const INT64 = scalar('INT64');
export const FLOAT64 = scalar('FLOAT64');
export const BOOL = scalar('BOOL');
export const TIMESTAMP = scalar('TIMESTAMP');
export const TIME = scalar('TIME');
export const JSON_TYPE = scalar('JSON');
export const NULL_TYPE = scalar('NULL');
export const LOOSE_JSON_LEAF: BqType = Object.freeze({ kind: 'scalar', name: 'STRING', loose: true });

export function isScalar(t: BqType, ...names: ScalarName[]): boolean {
  return t.kind === 'scalar' && (names.length === 0 || names.includes(t.name));
}

/** The element type of a RANGE type (`DATE` of `RANGE<DATE>`); undefined for any other type. */
export function rangeElement(t: BqType): RangeElement | undefined {
  if (t.kind !== 'scalar' || !t.name.startsWith('RANGE<')) return undefined;
  return t.name.slice(6, -1) as RangeElement;
}

export function rangeOf(element: RangeElement): BqType {
  return scalar(`RANGE<${element}>`);
}

export function isNumeric(t: BqType): boolean {
  return isScalar(t, 'INT64', 'FLOAT64', 'NUMERIC');
}

/** The BigQuery type of a JSON field as the source schema describes it. */
export function fieldType(field: FieldSchema): BqType {
  if (field.type === 'RECORD') {
    return { kind: 'jsonArray', element: { kind: 'record', fields: field.fields }, single: field.single === true };
  }
  const leaf = scalar(field.type);
  return field.repeated ? { kind: 'jsonArray', element: leaf, single: false } : leaf;
}

/**
 * The type of a column fed by both sides of a UNION: JSON records merge their fields, and an
 * array is read by path (`single`) only when it is single on both sides.
 */
export function unionType(a: BqType, b: BqType): BqType {
  if (a.kind === 'jsonArray' && b.kind === 'jsonArray')
    return { kind: 'jsonArray', element: unionType(a.element, b.element), single: a.single && b.single };
  // Fields unknown on either side (a source without events yet) stay unknown: any field reads loosely.
  if (a.kind === 'record' && b.kind === 'record') {
    if (a.struct || b.struct) return a.struct ? a : b;
    return { kind: 'record', fields: a.fields && b.fields ? mergeFieldMaps(a.fields, b.fields) : undefined };
  }
  return isScalar(a, 'NULL') ? b : a;
}

/** How a type is named in `Translation.columns`, e.g. `ARRAY<STRUCT<path STRING>>`. */
export function typeName(t: BqType): string {
  switch (t.kind) {
    case 'scalar':
      return t.name === 'NULL' ? 'INT64' : t.name;
    case 'record':
      return t.struct ? `STRUCT<${t.struct.map((f) => `${f.name} ${typeName(f.type)}`).join(', ')}>` : 'STRUCT';
    case 'jsonArray':
    case 'array':
      return `ARRAY<${typeName(t.element)}>`;
  }
}

/** A resolved expression: the Postgres node computing it and its BigQuery type. */
export interface Typed {
  readonly sql: PgExpr;
  readonly type: BqType;
  /** The unescaped value when the expression is a string literal (enables compile-time rewrites). */
  readonly literal?: string;
  /** A query parameter: always bound as text, so it takes the type of what it is compared with. */
  readonly param?: boolean;
  /**
   * A field the schema does not know (yet): its jsonb value, so that the query may still read
   * through it as a record (`x.y`) or unnest it, as it would once events bring the field.
   */
  readonly unknownJson?: PgExpr;
  /**
   * Hot leaves readable below this value (a `metadata` column, a record of it, or a record array
   * of it), by dotted path relative to the value: the typed column that holds the leaf
   * (src/storage/hotLeaves.ts; read by resolve/hot.ts).
   */
  readonly hot?: HotReads;
}

/** A hot leaf's column as a query sees it, and the column's type. */
export interface HotRead {
  readonly sql: PgExpr;
  readonly type: 'STRING' | 'INT64' | 'FLOAT64' | 'BOOL';
  /** Whose column it is, for the facts that say where it is complete (src/storage/hotLeafFacts.ts). */
  readonly leaf: HotLeafRef;
}

/** A hot leaf by its source's table and its full path (`metadata.request.path`). */
export interface HotLeafRef {
  readonly table: string;
  readonly path: string;
}
export type HotReads = ReadonlyMap<string, HotRead>;

export function typed(sql: PgExpr, type: BqType, extra: Partial<Typed> = {}): Typed {
  return { sql, type, ...extra };
}
