/**
 * STRUCT values and arrays built by a query. A STRUCT is a jsonb object (`jsonb_build_object`),
 * an array of STRUCTs a jsonb array; the resolver type (`record` with `struct` fields) remembers
 * each field's BigQuery type, so a field read back (`s.ts`) is cast to the type it was built from.
 */
import { fromJsonText } from '../coerce.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { typed, type BqType, type StructFieldType, type Typed } from '../types.js';

/** Postgres passes at most 100 arguments to a function: 50 key / value pairs per jsonb_build_object, joined by `||`. */
const PAIRS_PER_CALL = 50;

/** The type a value keeps inside a jsonb document: a Postgres array becomes a JSON array. */
export function jsonStoredType(t: BqType): BqType {
  return t.kind === 'array' ? { kind: 'jsonArray', element: jsonStoredType(t.element), single: false } : t;
}

/** `jsonb_build_object('a', a, 'b', b, …)` typed as a STRUCT with those fields. */
export function buildStruct(fields: readonly { readonly name: string; readonly value: Typed }[]): Typed {
  const types: StructFieldType[] = fields.map((f) => ({ name: f.name, type: jsonStoredType(f.value.type) }));
  let sql: PgExpr | undefined;
  for (let start = 0; start < fields.length || start === 0; start += PAIRS_PER_CALL) {
    const args: PgExpr[] = [];
    for (const f of fields.slice(start, start + PAIRS_PER_CALL)) args.push(pg.literal(f.name), f.value.sql);
    const call = pg.func('jsonb_build_object', args);
    sql = sql ? pg.op('||', sql, call) : call;
  }
  return typed(sql!, { kind: 'record', struct: types });
}

/** A field of a built STRUCT, read back with its type: scalars as text cast to the type, records and arrays as jsonb. */
export function structField(object: PgExpr, field: StructFieldType): Typed {
  const t = field.type;
  if (t.kind !== 'scalar') return typed(pg.op('->', object, pg.literal(field.name)), t);
  return fromJsonText(pg.op('->>', object, pg.literal(field.name)), t);
}

/** The field named `name` (exactly, else case-insensitively, as BigQuery). */
export function findStructField(fields: readonly StructFieldType[], name: string): StructFieldType | undefined {
  for (const f of fields) if (f.name === name) return f;
  const folded = name.toLowerCase();
  for (const f of fields) if (f.name.toLowerCase() === folded) return f;
  return undefined;
}
