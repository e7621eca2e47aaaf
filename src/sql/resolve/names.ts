/**
 * Name resolution: range aliases, columns of sources and CTEs, fields of JSON records typed by
 * the source schema, and the "did you mean" of unknown names.
 */
import { fromJsonText } from '../coerce.js';
import { SqlNameError, SqlSyntaxError, SqlUnsupportedError, didYouMean } from '../errors.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { BODY_COLUMN, FIXED_COLUMNS, METADATA_COLUMN, type FieldSchema, type SourceTable } from '../../sources/schema.js';
import { LOOSE_JSON_LEAF, fieldType, scalar, typed, type BqType, type Typed } from '../types.js';
import type { Context, Range, Scope } from './scope.js';

/** Columns every log table has, typed. */
const FIXED: ReadonlyMap<string, BqType> = new Map(Object.entries(FIXED_COLUMNS).map(([k, v]) => [k, scalar(v.type)]));

/** Every column a FROM item offers, in order (for `*`, `alias.*` and suggestions). */
export function rangeColumns(range: Range): { name: string; value: Typed }[] {
  switch (range.kind) {
    case 'source': return sourceColumnNames(range.source).map((name) => ({ name, value: sourceColumn(range, name)! }));
    case 'relation': return range.columns.map((c) => ({ name: c.name, value: typed(pg.column(range.alias, c.name), c.type) }));
    case 'value': return [{ name: range.names[0]!, value: range.value }];
  }
}

/** The fields of a record value as columns (`select r.*`). */
export function recordColumns(value: Typed, ctx: Context, pos: number): { name: string; value: Typed }[] {
  const fields = value.type.kind === 'record' ? value.type.fields ?? {} : {};
  return Object.keys(fields).map((name) => ({ name, value: fieldOf(value, name, ctx, pos) }));
}


function sourceColumnNames(source: SourceTable): string[] {
  return [...FIXED.keys(), METADATA_COLUMN, ...Object.keys(source.fields).filter((k) => k !== METADATA_COLUMN && !FIXED.has(k))];
}

/** A column of a log table: a fixed column, the metadata column, or a top-level field stored in `body`. */
function sourceColumn(range: Extract<Range, { kind: 'source' }>, name: string): Typed | undefined {
  const keys = sourceKeys(range.source);
  const key = keys.exact.has(name) ? name : keys.folded.get(name.toLowerCase());
  if (key === undefined) return undefined;
  const fixed = FIXED.get(key);
  if (fixed) return typed(pg.column(range.alias, key), fixed);
  const field = range.source.fields[key];
  if (key === METADATA_COLUMN) {
    // The metadata column exists even before a source has seen any events: a record array without known fields.
    return typed(pg.column(range.alias, key), field ? fieldType(field) : { kind: 'jsonArray', element: { kind: 'record' }, single: false });
  }
  return jsonField(pg.column(range.alias, BODY_COLUMN), key, field!);
}

/** Column names a source answers to, exact and case-folded; computed once per source object. */
interface SourceKeys { readonly exact: ReadonlySet<string>; readonly folded: ReadonlyMap<string, string>; readonly all: readonly string[] }
const keysBySource = new WeakMap<SourceTable, SourceKeys>();

function sourceKeys(source: SourceTable): SourceKeys {
  let keys = keysBySource.get(source);
  if (!keys) {
    const all = [...FIXED.keys(), METADATA_COLUMN, ...Object.keys(source.fields)];
    const folded = new Map<string, string>();
    for (const k of all) if (!folded.has(k.toLowerCase())) folded.set(k.toLowerCase(), k);
    keysBySource.set(source, (keys = { exact: new Set(all), folded, all }));
  }
  return keys;
}

/** Exact name first, then BigQuery's case-insensitive match. */
function findKey(name: string, keys: Iterable<string>): string | undefined {
  let folded: string | undefined;
  const lower = name.toLowerCase();
  for (const k of keys) {
    if (k === name) return k;
    if (folded === undefined && k.toLowerCase() === lower) folded = k;
  }
  return folded;
}

/** `object -> key` typed by the schema; scalar leaves read as text and cast (INT64 → bigint, …). */
function jsonField(object: PgExpr, key: string, field: FieldSchema | undefined): Typed {
  if (!field) return typed(pg.op('->>', object, pg.literal(key)), LOOSE_JSON_LEAF);
  const type = fieldType(field);
  if (type.kind !== 'scalar') return typed(pg.op('->', object, pg.literal(key)), type);
  return fromJsonText(pg.op('->>', object, pg.literal(key)), type);
}

export function fieldOf(value: Typed, name: string, ctx: Context, pos: number): Typed {
  const t = value.type;
  if (t.kind === 'record') {
    const known = t.fields && Object.keys(t.fields).length ? t.fields : undefined;
    // A record whose schema lists no fields yet (no events seen) reads any field as an untyped leaf.
    if (!known) return jsonField(value.sql, name, undefined);
    const key = findKey(name, Object.keys(known));
    if (key === undefined) throw new SqlNameError(`unknown field ${name}${didYouMean(name, Object.keys(known))}`, ctx.text, pos);
    return jsonField(value.sql, key, known[key]);
  }
  const what = t.kind === 'scalar' ? t.name : 'an ARRAY';
  const hint = t.kind === 'jsonArray' ? '; UNNEST it first, e.g. cross join unnest(x) as x' : '';
  throw new SqlSyntaxError(`cannot access field ${name} of ${what}${hint}`, ctx.text, pos);
}

type PathHead = { kind: 'range'; range: Range } | { kind: 'value'; value: Typed };

/**
 * Resolves `a.b.c`: a range alias first (so `unnest(metadata) as metadata` shadows the column),
 * then a column of a table in scope, then a field of an unnested record; outer scopes after inner.
 */
export function resolvePath(parts: readonly string[], pos: number, scope: Scope, ctx: Context, allowRange = false): PathHead {
  const [head, ...rest] = parts as [string, ...string[]];
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    const range = s.ranges.find((r) => r.names.some((n) => n.toLowerCase() === head.toLowerCase()));
    if (range) {
      if (range.kind === 'value') return { kind: 'value', value: fields(range.value, rest, ctx, pos) };
      if (!rest.length) {
        if (allowRange) return { kind: 'range', range };
        throw new SqlUnsupportedError(`${head} is a table; select its columns, e.g. ${head}.id`, ctx.text, pos);
      }
      const column = rangeColumn(range, rest[0]!);
      if (!column) throw new SqlNameError(`unknown column ${rest[0]} of ${head}${didYouMean(rest[0]!, rangeColumns(range).map((c) => c.name))}`, ctx.text, pos);
      if (rest.length === 1 && allowRange && column.type.kind === 'record') return { kind: 'value', value: column };
      return { kind: 'value', value: fields(column, rest.slice(1), ctx, pos) };
    }
    const column = unqualifiedColumn(head, s, ctx, pos);
    if (column) return { kind: 'value', value: fields(column, rest, ctx, pos) };
    const target = s.aliases.find((t) => t.name.toLowerCase() === head.toLowerCase());
    if (target) return { kind: 'value', value: fields(target.value, rest, ctx, pos) };
  }
  const candidates = visibleNames(scope);
  throw new SqlNameError(`unknown name ${head}${didYouMean(head, candidates)}`, ctx.text, pos);
}

/** A name used as a value (`t.col`, `r.path`, `path`): resolvePath without whole tables. */
export function resolveName(parts: readonly string[], pos: number, scope: Scope, ctx: Context): Typed {
  const head = resolvePath(parts, pos, scope, ctx);
  if (head.kind === 'range') throw new SqlUnsupportedError(`${parts.join('.')} is a table; select its columns`, ctx.text, pos);
  return head.value;
}

export function rangeColumn(range: Range, name: string): Typed | undefined {
  if (range.kind === 'source') return sourceColumn(range, name);
  if (range.kind === 'relation') {
    const key = findKey(name, range.columns.map((c) => c.name));
    const column = range.columns.find((c) => c.name === key);
    return column && typed(pg.column(range.alias, column.name), column.type);
  }
  return undefined;
}

function unqualifiedColumn(name: string, scope: Scope, ctx: Context, pos: number): Typed | undefined {
  if (scope.using.has(name.toLowerCase())) {
    const owner = scope.ranges.find((r) => rangeColumn(r, name));
    return owner && typed(pg.column(undefined, name), rangeColumn(owner, name)!.type);
  }
  let found: Typed | undefined;
  for (const range of scope.ranges) {
    const column = rangeColumn(range, name);
    if (!column) continue;
    if (found) throw new SqlNameError(`column name ${name} is ambiguous; qualify it with a table alias`, ctx.text, pos);
    found = column;
  }
  if (found) return found;
  // Fields of unnested records are visible unqualified (`where path like …` after `unnest(m.request) as r`).
  for (const range of scope.ranges) {
    if (range.kind !== 'value' || range.value.type.kind !== 'record' || !range.value.type.fields) continue;
    const key = findKey(name, Object.keys(range.value.type.fields));
    if (key !== undefined) return fieldOf(range.value, key, ctx, pos);
  }
  return undefined;
}

function visibleNames(scope: Scope): string[] {
  const names: string[] = [];
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    for (const r of s.ranges) {
      names.push(...r.names);
      if (r.kind !== 'value') names.push(...rangeColumns(r).map((c) => c.name));
      else if (r.value.type.kind === 'record') names.push(...Object.keys(r.value.type.fields ?? {}));
    }
  }
  return names;
}

function fields(value: Typed, names: readonly string[], ctx: Context, pos: number): Typed {
  return names.reduce((v, name) => fieldOf(v, name, ctx, pos), value);
}

export function nameResolves(name: string, scope: Scope): boolean {
  const lower = name.toLowerCase();
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    if (s.ranges.some((r) => r.names.some((n) => n.toLowerCase() === lower) || rangeColumn(r, name))) return true;
  }
  return false;
}
