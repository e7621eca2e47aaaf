/**
 * Name resolution: range aliases, columns of sources and CTEs, fields of JSON records typed by
 * the source schema, and the "did you mean" of unknown names.
 */
import { fromJsonText } from '../coerce.js';
import { SqlLimitError, SqlNameError, SqlSyntaxError, SqlUnsupportedError, didYouMean } from '../errors.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { BODY_COLUMN, FIXED_COLUMNS, METADATA_COLUMN, type FieldSchema, type SourceTable } from '../catalog.js';
import { LOOSE_JSON_LEAF, fieldType, scalar, typed, type BqType, type HotReads, type Typed } from '../types.js';
import type { Column, Context, Range, Scope } from './scope.js';
import { buildStruct, findStructField, structField } from './structs.js';
import { hotBelow, hotLeafRead, relationValue, sourceHot } from './hot.js';
import { carrierSource, eventCarriers, isEventCarrier } from './events.js';

/** Columns every log table has, typed. */
const FIXED: ReadonlyMap<string, BqType> = new Map(Object.entries(FIXED_COLUMNS).map(([k, v]) => [k, scalar(v.type)]));

/**
 * Lower-case copies by name. perf: names are compared case-insensitively again and again (every
 * range alias, for every name in a query), and the names come from the lexer's interned words,
 * so a lookup beats lower-casing (a String.prototype call, slow where any class extends String:
 * see lexer.ts). Bounded, so hostile input cannot grow it.
 */
const LOWER = new Map<string, string>();

export function lower(name: string): string {
  let l = LOWER.get(name);
  if (l === undefined) {
    l = name.toLowerCase();
    if (LOWER.size < 4096 && name.length <= 256) LOWER.set(name, l);
  }
  return l;
}

/** Every column a FROM item offers, in order (for `*`, `alias.*` and suggestions). */
export function rangeColumns(range: Range): { name: string; value: Typed }[] {
  switch (range.kind) {
    case 'source':
      return sourceColumnNames(range.source).map((name) => ({ name, value: sourceColumn(range, name)! }));
    case 'relation':
      return range.columns.map((c) => ({ name: c.name, value: relationValue(range.alias, c) }));
    case 'value':
      return [{ name: range.names[0], value: range.value }];
  }
}

/** The fields of a record value as columns (`select r.*`). */
export function recordColumns(value: Typed, ctx: Context, pos: number): { name: string; value: Typed }[] {
  if (value.type.kind === 'record' && value.type.struct)
    return value.type.struct.map((f) => ({ name: f.name, value: structField(value.sql, f) }));
  const fields = value.type.kind === 'record' ? (value.type.fields ?? {}) : {};
  return Object.keys(fields).map((name) => ({ name, value: fieldOf(value, name, ctx, pos) }));
}

function sourceColumnNames(source: SourceTable): string[] {
  return [...FIXED.keys(), METADATA_COLUMN, ...Object.keys(source.fields).filter((k) => k !== METADATA_COLUMN && !FIXED.has(k))];
}

/** A column of a log table: a fixed column, the metadata column, or a top-level field stored in `body`. */
function sourceColumn(range: Extract<Range, { kind: 'source' }>, name: string): Typed | undefined {
  const keys = sourceKeys(range.source);
  const key = keys.exact.has(name) ? name : keys.folded.get(lower(name));
  if (key === undefined) return lower(name) === BODY_COLUMN ? wholeEvent(range) : undefined;
  const fixed = FIXED.get(key);
  if (fixed) return typed(pg.column(range.alias, key), fixed);
  const field = range.source.fields[key];
  if (key === METADATA_COLUMN) {
    // The metadata column exists even before a source has seen any events: a record array without known fields.
    const type: BqType = field ? fieldType(field) : { kind: 'jsonArray', element: { kind: 'record' }, single: false };
    const hot = sourceHot(range.alias, range.source);
    return typed(pg.column(range.alias, key), type, hot && { hot });
  }
  return jsonField(pg.column(range.alias, BODY_COLUMN), key, field);
}

/**
 * `body`, as the original's Postgres backend names the whole stored event: one record of every
 * top-level field (ours keeps the fixed columns and `metadata` beside a `body` of the rest, so
 * they are put back together). Not part of `*`. A field of its own named `body` wins.
 */
function wholeEvent(range: Extract<Range, { kind: 'source' }>): Typed {
  const columns = [...FIXED.keys(), METADATA_COLUMN].flatMap((c) => [pg.literal(c), pg.column(range.alias, c)]);
  const sql = pg.op(
    '||',
    pg.func('coalesce', [pg.column(range.alias, BODY_COLUMN), pg.cast(pg.literal('{}'), 'jsonb')]),
    pg.func('jsonb_build_object', columns),
  );
  return typed(sql, { kind: 'record', fields: { ...range.source.fields, ...FIXED_COLUMNS } });
}

/**
 * Column names a source answers to, exact and case-folded; computed once per field map. Keyed by
 * `source.fields`, not the source: the service's lookup makes a new SourceTable object per call
 * around the same (immutable) field map, so a cache by source object never hit there.
 */
interface SourceKeys {
  readonly exact: ReadonlySet<string>;
  readonly folded: ReadonlyMap<string, string>;
  readonly all: readonly string[];
}
const keysByFields = new WeakMap<SourceTable['fields'], SourceKeys>();

function sourceKeys(source: SourceTable): SourceKeys {
  let keys = keysByFields.get(source.fields);
  if (!keys) {
    const all = [...FIXED.keys(), METADATA_COLUMN, ...Object.keys(source.fields)];
    const folded = new Map<string, string>();
    for (const k of all) if (!folded.has(k.toLowerCase())) folded.set(k.toLowerCase(), k);
    keysByFields.set(source.fields, (keys = { exact: new Set(all), folded, all }));
  }
  return keys;
}

/** Exact name first, then BigQuery's case-insensitive match. */
function findKey(name: string, keys: Iterable<string>): string | undefined {
  let folded: string | undefined;
  const folding = lower(name);
  for (const k of keys) {
    if (k === name) return k;
    if (folded === undefined && lower(k) === folding) folded = k;
  }
  return folded;
}

/**
 * A field the schema does not know: it reads as NULL until events bring it, as on the original's
 * Postgres backend (docs/COMPATIBILITY.md, "Unknown fields"). An untyped leaf that takes the type of what it
 * meets, which can also be read through as a record or unnested.
 */
function unknownField(object: PgExpr, key: string): Typed {
  const name = pg.literal(key);
  return typed(pg.op('->>', object, name), LOOSE_JSON_LEAF, { unknownJson: pg.op('->', object, name) });
}

/**
 * `object -> key` typed by the schema; scalar leaves read as text and cast (INT64 → bigint, …),
 * or from their hot column when `hot` (the hot leaves below `object`) has one (resolve/hot.ts).
 */
function jsonField(object: PgExpr, key: string, field: FieldSchema | undefined, hot?: HotReads): Typed {
  if (!field) return unknownField(object, key);
  const type = fieldType(field);
  if (type.kind !== 'scalar') {
    const below = hotBelow(hot, key);
    return typed(pg.op('->', object, pg.literal(key)), type, below && { hot: below });
  }
  const text = pg.op('->>', object, pg.literal(key));
  return hotLeafRead(hot, key, text, type) ?? fromJsonText(text, type);
}

export function fieldOf(value: Typed, name: string, ctx: Context, pos: number): Typed {
  const t = value.type;
  if (value.unknownJson) {
    // Through a field nobody has seen: were it there, it would be a record, stored as `[{…}]`.
    return unknownField(pg.op('->', value.unknownJson, pg.number('0')), name);
  }
  if (t.kind === 'record' && t.struct) {
    const field = findStructField(t.struct, name);
    if (!field)
      throw new SqlNameError(
        `unknown field ${name}${didYouMean(
          name,
          t.struct.map((f) => f.name),
        )}`,
        ctx.text,
        pos,
      );
    return structField(value.sql, field);
  }
  if (t.kind === 'record') {
    const known = t.fields ? Object.keys(t.fields) : [];
    const key = known.length ? findKey(name, known) : undefined;
    if (key === undefined) {
      ctx.translation.warn(`unknown field ${name} reads as NULL until events bring it${didYouMean(name, known)}`, ctx.text, pos);
      return unknownField(value.sql, name);
    }
    return jsonField(value.sql, key, t.fields![key], value.hot);
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
  const head = parts[0];
  const headLower = lower(head);
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    const range = rangeNamed(s, headLower);
    if (range) {
      if (range.kind === 'value') return { kind: 'value', value: fields(range.value, parts, 1, ctx, pos) };
      if (parts.length === 1) {
        if (allowRange) return { kind: 'range', range };
        throw new SqlUnsupportedError(`${head} is a table; select its columns, e.g. ${head}.id`, ctx.text, pos);
      }
      const name = parts[1];
      const column = rangeColumn(range, name) ?? unknownSourceField(range, name, ctx, pos);
      if (!column)
        throw new SqlNameError(
          `unknown column ${name} of ${head}${didYouMean(
            name,
            rangeColumns(range).map((c) => c.name),
          )}`,
          ctx.text,
          pos,
        );
      if (parts.length === 2 && allowRange && column.type.kind === 'record') return { kind: 'value', value: column };
      return { kind: 'value', value: fields(column, parts, 2, ctx, pos) };
    }
    const column = unqualifiedColumn(head, s, ctx, pos);
    if (column) return { kind: 'value', value: fields(column, parts, 1, ctx, pos) };
    const target = s.aliases.find((t) => lower(t.name) === headLower);
    if (target) return { kind: 'value', value: fields(target.value, parts, 1, ctx, pos) };
  }
  // `val` when the only table in scope whose rows are events is one source table, or a CTE or
  // subquery of its events (beside unnested records and other relations, none of which has it): a
  // top-level field of the event (resolve/events.ts). With two such tables it would be a guess, so
  // it stays an error that asks to qualify it.
  const carriers = eventCarriers(scope);
  const field = carriers.length === 1 ? unknownSourceField(carriers[0], head, ctx, pos) : undefined;
  if (field) return { kind: 'value', value: fields(field, parts, 1, ctx, pos) };
  const candidates = visibleNames(scope);
  const qualify =
    carriers.length > 1
      ? `; if it is a field of one of the tables that no event has brought yet, qualify it (${carriers.map((r) => `${r.names[0] ?? r.alias}.${head}`).join(' or ')})`
      : '';
  throw new SqlNameError(`unknown name ${head}${didYouMean(head, candidates)}${qualify}`, ctx.text, pos);
}

/**
 * BigQuery's limit on a column name. A longer name can name no field, so it is refused rather
 * than read as one no event has brought (and a 5,000-character name is no typo to suggest for).
 */
const MAX_COLUMN_NAME_LENGTH = 300;

/**
 * A name that a table of one source's events does not answer to (resolve/events.ts):
 * - of a source table, a top-level field its schema does not know yet: schemas grow as events
 *   arrive, and an endpoint written before them must run, reading the field (NULL meanwhile);
 * - of a CTE, subquery or endpoint of its events, a name its select list left out: NULL, as on
 *   the original's Postgres backend, and never the event's value (what a relation shows is its
 *   author's choice: a sandboxed caller may read an endpoint's CTEs and nothing more).
 * Both with a warning. Over a relation of anything else the name stays an error.
 */
function unknownSourceField(range: Range, name: string, ctx: Context, pos: number): Typed | undefined {
  if (!isEventCarrier(range)) return undefined;
  if (name.length > MAX_COLUMN_NAME_LENGTH)
    throw new SqlLimitError(`a column name may be at most ${MAX_COLUMN_NAME_LENGTH} characters, as in BigQuery`, ctx.text, pos);
  const source = carrierSource(range);
  if (range.kind === 'source') {
    ctx.translation.warn(
      `unknown field ${name} of ${source.name} reads as NULL until events bring it${didYouMean(name, sourceKeys(source).all)}${nestedLeafHint(name, source)}`,
      ctx.text,
      pos,
    );
    return unknownField(pg.column(range.alias, BODY_COLUMN), name);
  }
  const table = range.names[0] ?? 'the subquery';
  ctx.translation.warn(
    `unknown field ${name} of ${table} reads as NULL: ${table} does not select it (its rows are events of ${source.name})${didYouMean(
      name,
      range.columns.map((c) => c.name),
    )}${nestedLeafHint(name, source)}`,
    ctx.text,
    pos,
  );
  return absentField();
}

/** NULL as an unknown field reads: a leaf that takes the type of what it meets, and reads through as NULL. */
function absentField(): Typed {
  return typed(pg.cast(pg.literal(null), 'text'), LOOSE_JSON_LEAF, { unknownJson: pg.cast(pg.literal(null), 'jsonb') });
}

/**
 * Fields below the top level of a schema by lower-case name, for the hint of an unknown top-level
 * name (`pipeline_id` when the events have `metadata.pipeline_id`). Computed once per field map,
 * as sourceKeys: a hostile query can name thousands of unknown fields.
 */
const nestedByFields = new WeakMap<SourceTable['fields'], ReadonlyMap<string, readonly string[]>>();
const MAX_HINTED_PATHS = 3;

function nestedLeafHint(name: string, source: SourceTable): string {
  let nested = nestedByFields.get(source.fields);
  if (!nested) {
    const byName = new Map<string, string[]>();
    const visit = (fieldMap: Readonly<Record<string, FieldSchema>>, path: string): void => {
      for (const [key, field] of Object.entries(fieldMap)) {
        if (path) {
          const paths = byName.get(key.toLowerCase()) ?? [];
          if (paths.length < MAX_HINTED_PATHS) byName.set(key.toLowerCase(), [...paths, path + key]);
        }
        if (field.fields) visit(field.fields, `${path}${key}.`);
      }
    };
    visit(source.fields, '');
    nestedByFields.set(source.fields, (nested = byName));
  }
  const paths = nested.get(lower(name));
  return paths ? `; ${source.name} has ${paths.join(', ')} (unnest its record to read it, e.g. cross join unnest(metadata) as m)` : '';
}

/** A name used as a value (`t.col`, `r.path`, `path`): resolvePath without whole tables. */
export function resolveName(parts: readonly string[], pos: number, scope: Scope, ctx: Context): Typed {
  const head = resolvePath(parts, pos, scope, ctx, parts.length === 1);
  // A table alias as a value (`select t from t`) is its row as a STRUCT of its columns.
  if (head.kind === 'range') return buildStruct(rangeColumns(head.range));
  return head.value;
}

/** The first range of `scope` that one of whose names is `nameLower` case-insensitively. */
function rangeNamed(scope: Scope, nameLower: string): Range | undefined {
  for (const r of scope.ranges) {
    for (const n of r.names) if (lower(n) === nameLower) return r;
  }
  return undefined;
}

export function rangeColumn(range: Range, name: string): Typed | undefined {
  if (range.kind === 'source') return sourceColumn(range, name);
  if (range.kind === 'relation') {
    const column = relationColumn(range.columns, name);
    return column && relationValue(range.alias, column);
  }
  return undefined;
}

/** The first column named exactly `name`, else the first named `name` case-insensitively (as findKey, without a list of names). */
function relationColumn(columns: readonly Column[], name: string): Column | undefined {
  for (const c of columns) if (c.name === name) return c;
  const folding = lower(name);
  for (const c of columns) if (lower(c.name) === folding) return c;
  return undefined;
}

function unqualifiedColumn(name: string, scope: Scope, ctx: Context, pos: number): Typed | undefined {
  if (scope.using.size && scope.using.has(lower(name))) {
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
    if (range.kind !== 'value' || range.value.type.kind !== 'record') continue;
    if (range.value.type.struct) {
      const field = findStructField(range.value.type.struct, name);
      if (field) return structField(range.value.sql, field);
      continue;
    }
    if (!range.value.type.fields) continue;
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
      else if (r.value.type.kind === 'record')
        names.push(...(r.value.type.struct?.map((f) => f.name) ?? Object.keys(r.value.type.fields ?? {})));
    }
  }
  return names;
}

/** Fields `names[from]`, `names[from + 1]`, … of `value`. */
function fields(value: Typed, names: readonly string[], from: number, ctx: Context, pos: number): Typed {
  for (let i = from; i < names.length; i++) value = fieldOf(value, names[i], ctx, pos);
  return value;
}

export function nameResolves(name: string, scope: Scope): boolean {
  const folding = lower(name);
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    if (s.ranges.some((r) => r.names.some((n) => lower(n) === folding) || rangeColumn(r, name))) return true;
  }
  return false;
}
