/**
 * Hot leaves in the translator: where an expression reads a leaf of single records that the
 * source keeps as a typed column (src/storage/hotLeaves.ts), it reads
 * `coalesce(column, <the JSON read>)` instead. The column is NULL or exactly the JSON read's value,
 * so the rows are the same either way (test/sql/hot-differential.test.ts); where the column is
 * filled, `metadata` is not decompressed (perf: docs/ARCHITECTURE.md, "Hot leaves").
 *
 * The columns travel with the `metadata` value: a source's `metadata` column knows its hot
 * leaves, a record read from it (UNNEST of a single record, `m.request`) knows those below it,
 * and a CTE or derived table that selects such a value passes the columns on as hidden output
 * columns (exposeHotColumns), so `edge_logs` of `logs.all` keeps them for the caller's query.
 */
import { fromJsonText } from '../coerce.js';
import { isAggregate } from '../catalogue.js';
import { pg, type PgExpr, type PgSelect } from '../postgres/ast.js';
import { fromAliases } from '../postgres/narrow.js';
import { some } from '../postgres/transform.js';
import { typed, type BqType, type HotRead, type HotReads, type Typed } from '../types.js';
import { hotColumnName } from '../../storage/hotLeaves.js';
import type { SourceTable } from '../../sources/schema.js';
import type { Column, Resolved } from './scope.js';

const PREFIX = 'metadata.';

/** The hot leaves of a source's `metadata` column read through `alias`, by path below `metadata`. */
export function sourceHot(alias: string, source: SourceTable): HotReads | undefined {
  if (!source.hot?.length) return undefined;
  const reads = new Map<string, HotRead>();
  for (const leaf of source.hot) {
    if (leaf.path.startsWith(PREFIX))
      reads.set(leaf.path.slice(PREFIX.length), { sql: pg.column(alias, hotColumnName(leaf.path)), type: leaf.type });
  }
  return reads.size ? reads : undefined;
}

/** The hot leaves below field `key` of a record (or record array) with hot leaves `hot`. */
export function hotBelow(hot: HotReads | undefined, key: string): HotReads | undefined {
  if (!hot) return undefined;
  let below: Map<string, HotRead> | undefined;
  const prefix = key + '.';
  for (const [path, read] of hot) {
    if (path.startsWith(prefix)) (below ??= new Map()).set(path.slice(prefix.length), read);
  }
  return below;
}

/**
 * The leaf `key` of a record, typed `type`, whose JSON read is `text` (`r->>'key'`): through its
 * column when it has one that can give the read's value; undefined otherwise. A STRING column
 * holds the JSON read's text, so it serves a leaf of any type (cast as the JSON text would be);
 * a typed column serves only a leaf of its own type.
 */
export function hotLeafRead(hot: HotReads | undefined, key: string, text: PgExpr, type: BqType): Typed | undefined {
  const read = hot?.get(key);
  if (!read || type.kind !== 'scalar') return undefined;
  if (read.type === 'STRING') return fromJsonText(pg.func('coalesce', [read.sql, text]), type);
  if (read.type !== type.name) return undefined;
  return typed(pg.func('coalesce', [read.sql, fromJsonText(text, type).sql]), type);
}

/**
 * The guard that keeps CROSS JOIN UNNEST's dropping of rows without the record `record`: with a
 * hot leaf below it, `(leaf IS NOT NULL OR record IS NOT NULL)` (a leaf is there only when its
 * record is), so a row whose column is filled never decompresses `metadata` for the guard.
 */
export function recordGuard(record: PgExpr, hot: HotReads | undefined): PgExpr {
  const exists = pg.is(record, 'NULL', true);
  const first = hot?.values().next().value;
  return first ? pg.or(pg.is(first.sql, 'NULL', true), exists) : exists;
}

/** The record a guard made by recordGuard tests, or undefined for any other condition. */
export function guardedRecord(g: PgExpr): PgExpr | undefined {
  if (g.kind === 'andOr' && g.op === 'OR' && g.operands.length === 2) return guardedRecord(g.operands[1]!);
  return g.kind === 'is' && g.test === 'NULL' && g.negated ? g.operand : undefined;
}

/** A column of a CTE or derived table read through `alias`, with the hot leaves it passes on. */
export function relationValue(alias: string, column: Column): Typed {
  const sql = pg.column(alias, column.name);
  if (!column.hotColumns) return typed(sql, column.type);
  const hot = new Map<string, HotRead>();
  for (const [path, c] of column.hotColumns) hot.set(path, { sql: pg.column(alias, c.name), type: c.type });
  return typed(sql, column.type, { hot });
}

/** Postgres truncates longer identifiers, which could make two hidden columns one. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * A query used as a CTE or derived table, with the hot leaves of its output columns added as
 * hidden output columns (`"metadata.request.path"`), so readers of the relation read them too.
 * Only a plain SELECT row for row over its FROM can pass a row's columns on: with GROUP BY,
 * aggregates, DISTINCT, a set operation, or a FROM rebuilt by a rewrite (QUALIFY, narrowing),
 * the columns are left out and readers read the JSON (same rows, no speed-up).
 */
export function exposeHotColumns(r: Resolved): Resolved {
  if (!r.columns.some((c) => c.hot)) return r;
  const plain = r.columns.map(({ hot: _hot, ...c }) => c);
  const body = r.query.body;
  if (body.kind !== 'select' || !body.from || body.distinct || body.groupBy.length || body.having) return { ...r, columns: plain };
  if (body.targets.some((t) => some(t.expr, (e) => e.kind === 'func' && isAggregate(e.name) && e.over === undefined)))
    return { ...r, columns: plain };
  const visible = new Set(fromAliases(body.from));
  const names = new Set(body.targets.map((t) => t.name));
  const added: PgSelect['targets'][number][] = [];
  const columns = r.columns.map(({ hot, ...c }): Column => {
    if (!hot) return c;
    const hotColumns = new Map<string, { name: string; type: HotRead['type'] }>();
    for (const [path, read] of hot) {
      const name = `${c.name}.${path}`;
      if (names.has(name) || Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES) continue;
      if (some(read.sql, (e) => e.kind === 'column' && (e.table === undefined || !visible.has(e.table)))) continue;
      names.add(name);
      added.push({ expr: read.sql, name });
      hotColumns.set(path, { name, type: read.type });
    }
    return hotColumns.size ? { ...c, hotColumns } : c;
  });
  if (!added.length) return { ...r, columns };
  return { query: { ...r.query, body: { ...body, targets: [...body.targets, ...added] } }, columns };
}
