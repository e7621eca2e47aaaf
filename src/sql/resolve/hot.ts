/**
 * Hot leaves in the translator: where an expression reads a leaf of single records that the
 * source keeps as a typed column (src/storage/hotLeaves.ts), it reads the column instead of the
 * JSON, with identical rows (test/sql/hot-differential.test.ts):
 *
 *   CASE WHEN logs.hot_leaf_exact('<table>', '<path>') THEN column ELSE coalesce(column, <JSON read>) END
 *
 * The planner calls that IMMUTABLE function while planning and keeps one branch
 * (migrations/1763810000000_hot-leaf-facts.js): the column alone where it is known complete
 * (src/storage/hotLeafFacts.ts), so the plan does not name `metadata` and Postgres can answer
 * from a covering index; otherwise the column where filled and the JSON where it is NULL (a
 * partition not backfilled yet, a value of another type), which is always right. The guards of
 * UNNEST fold the same way (recordGuard). perf: docs/ARCHITECTURE.md, "Hot leaves".
 *
 * The columns travel with the `metadata` value: a source's `metadata` column knows its hot
 * leaves, a record read from it (UNNEST of a single record, `m.request`) knows those below it,
 * and a CTE or derived table that selects such a value passes the columns on as hidden output
 * columns (exposeHotColumns), so `edge_logs` of `logs.all` keeps them for the caller's query.
 */
import { fromJsonText } from '../coerce.js';
import { isAggregate } from '../postgres/functions.js';
import { pg, type PgExpr, type PgFrom, type PgQuery, type PgSelect } from '../postgres/ast.js';
import { fromAliases } from '../postgres/narrow.js';
import { some } from '../postgres/transform.js';
import { typed, type BqType, type HotLeafRef, type HotRead, type HotReads, type Typed } from '../types.js';
import { HOT_LEAF_DENSE, HOT_LEAF_EXACT, hotColumnName, type SourceTable } from '../catalog.js';
import type { Column, Resolved } from './scope.js';

const PREFIX = 'metadata.';

/** The hot leaves of a source's `metadata` column read through `alias`, by path below `metadata`. */
export function sourceHot(alias: string, source: SourceTable): HotReads | undefined {
  if (!source.hot?.length) return undefined;
  const reads = new Map<string, HotRead>();
  for (const leaf of source.hot) {
    if (leaf.path.startsWith(PREFIX))
      reads.set(leaf.path.slice(PREFIX.length), {
        sql: pg.column(alias, hotColumnName(leaf.path)),
        type: leaf.type,
        leaf: { table: source.table, path: leaf.path },
      });
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

/** Whether the leaf's column holds exactly the JSON read in every row (a constant once planned). */
function exact(leaf: HotLeafRef): PgExpr {
  return pg.func(HOT_LEAF_EXACT, [pg.literal(leaf.table), pg.literal(leaf.path)]);
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
  if (read.type === 'STRING') {
    const complete = fromJsonText(read.sql, type).sql;
    return typed(
      pg.case([{ when: exact(read.leaf), then: complete }], fromJsonText(pg.func('coalesce', [read.sql, text]), type).sql),
      type,
    );
  }
  if (read.type !== type.name) return undefined;
  return typed(pg.case([{ when: exact(read.leaf), then: read.sql }], pg.func('coalesce', [read.sql, fromJsonText(text, type).sql])), type);
}

/** Guard arms tried in turn (one per hot leaf below the record, a few at most: each is a call at plan time). */
const MAX_GUARD_ARMS = 4;

/**
 * The guard that keeps CROSS JOIN UNNEST's dropping of rows without the record `record`. Where a
 * hot leaf below it is dense at the record's depth (every row with the record has the column:
 * hotLeafFacts.ts), `column IS NOT NULL`, folded by the planner; else
 * `(column IS NOT NULL OR record IS NOT NULL)` (a leaf is there only when its record is), so a
 * row whose column is filled never decompresses `metadata` for the guard.
 */
export function recordGuard(record: PgExpr, hot: HotReads | undefined): PgExpr {
  const exists = pg.is(record, 'NULL', true);
  const first = hot?.values().next().value;
  if (!hot || !first) return exists;
  const otherwise = pg.or(pg.is(first.sql, 'NULL', true), exists);
  const arms = [...hot].slice(0, MAX_GUARD_ARMS).map(([path, read]) => ({
    when: pg.func(HOT_LEAF_DENSE, [
      pg.literal(read.leaf.table),
      pg.literal(read.leaf.path),
      pg.number(String(recordDepth(read.leaf, path))),
    ]),
    then: pg.is(read.sql, 'NULL', true),
  }));
  return pg.case(arms, otherwise);
}

/**
 * The depth of the record a leaf is read below, from the leaf's full path and its path relative
 * to the record: `metadata.request.path` below `request` ('path') is depth 1, below `metadata`
 * ('request.path') depth 0.
 */
function recordDepth(leaf: HotLeafRef, relative: string): number {
  return leaf.path.split('.').length - 1 - relative.split('.').length;
}

/** The record a guard made by recordGuard tests, or undefined for any other condition. */
export function guardedRecord(g: PgExpr): PgExpr | undefined {
  if (g.kind === 'case' && g.otherwise) return guardedRecord(g.otherwise);
  if (g.kind === 'andOr' && g.op === 'OR' && g.operands.length === 2) return guardedRecord(g.operands[1]);
  return g.kind === 'is' && g.test === 'NULL' && g.negated ? g.operand : undefined;
}

/** A column of a CTE or derived table read through `alias`, with the hot leaves it passes on. */
export function relationValue(alias: string, column: Column): Typed {
  const sql = pg.column(alias, column.name);
  if (!column.hotColumns) return typed(sql, column.type);
  const hot = new Map<string, HotRead>();
  for (const [path, c] of column.hotColumns) hot.set(path, { sql: pg.column(alias, c.name), type: c.type, leaf: c.leaf });
  return typed(sql, column.type, { hot });
}

/**
 * Whether a query body is a plain SELECT that gives one row per row of its FROM, which can pass
 * the columns of those rows on: not with GROUP BY, aggregates, DISTINCT, a set operation, or a
 * FROM rebuilt by a rewrite (QUALIFY wraps the SELECT before this sees it).
 */
export function rowForRow(body: PgQuery['body']): body is PgSelect & { readonly from: PgFrom } {
  if (body.kind !== 'select' || !body.from || body.distinct || body.groupBy.length || body.having) return false;
  return !body.targets.some((t) => some(t.expr, (e) => e.kind === 'func' && isAggregate(e.name) && e.over === undefined));
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
  if (!rowForRow(body)) return { ...r, columns: plain };
  const visible = new Set(fromAliases(body.from));
  const names = new Set(body.targets.map((t) => t.name));
  const added: PgSelect['targets'][number][] = [];
  const columns = r.columns.map(({ hot, ...c }): Column => {
    if (!hot) return c;
    const hotColumns = new Map<string, { name: string; type: HotRead['type']; leaf: HotLeafRef }>();
    for (const [path, read] of hot) {
      const name = `${c.name}.${path}`;
      if (names.has(name) || Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES) continue;
      if (some(read.sql, (e) => e.kind === 'column' && (e.table === undefined || !visible.has(e.table)))) continue;
      names.add(name);
      added.push({ expr: read.sql, name });
      hotColumns.set(path, { name, type: read.type, leaf: read.leaf });
    }
    return hotColumns.size ? { ...c, hotColumns } : c;
  });
  if (!added.length) return { ...r, columns };
  return { ...r, query: { ...r.query, body: { ...body, targets: [...body.targets, ...added] } }, columns };
}
