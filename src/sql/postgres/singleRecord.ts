/**
 * A rewrite for speed: UNNEST of a record array that always held one object is not joined. Its
 * alias stands for `array->0`, read by path, and CROSS/INNER semantics (drop the rows without the
 * record) become an `IS NOT NULL` guard in WHERE, with an INNER join's condition beside it.
 *
 * Why: reading a leaf by path is 4–10× faster than unnesting with a lateral
 * `jsonb_array_elements` (docs/ARCHITECTURE.md, "Leaves read by path, not by unnesting").
 *
 * Whether an array always held one object is a fact of the source schema (`single: true`), known
 * only while resolving: the resolver records it on the UNNEST's FROM item as `single` (the
 * expression `array->0`), and this pass, run after resolution (src/sql/passes.ts), does the rest.
 *
 *   FROM t AS t0 CROSS JOIN LATERAL jsonb_array_elements(CASE … t0.metadata … END) AS t1(value) WHERE p(t1.value)
 *   → FROM t AS t0 WHERE t0.metadata->0 IS NOT NULL AND p(t0.metadata->0)
 *
 * Same rows: a guard in WHERE is right only when every join above the UNNEST is INNER, CROSS or
 * LEFT with the UNNEST on its right-hand chain; with a RIGHT or FULL join, or a parenthesised
 * join as a right operand, only `LEFT JOIN UNNEST … ON TRUE` is read by path (it keeps every row,
 * NULL when the record is missing, as the path read does). Aliases are unique in a translation,
 * so every `alias.value` anywhere in the tree (correlated subqueries included) is the UNNEST's.
 */
import { pg, type PgExpr, type PgFrom, type PgFunctionFrom, type PgJoin, type PgSelect, type PgQuery } from './ast.js';
import { sameExpr } from './transform.js';
import { isStrict } from './functions.js';
import { forEachNode, mapNodes } from '../walk.js';
import { guardedRecord } from '../resolve/hot.js';

type SingleRecord = NonNullable<PgFunctionFrom['single']>;

/** `query` with the single-record UNNESTs read by path. */
export function readSingleRecordsByPath(query: PgQuery): PgQuery {
  const raw = new Map<string, SingleRecord>();
  forEachNode(query, (n) => {
    if (n.kind === 'select' && n.from !== undefined) collect(n.from as PgFrom, needsRealJoin(n.from as PgFrom), undefined, raw);
  });
  if (!raw.size) return query;
  // What each alias stands for, with the aliases it reads through replaced in turn (`UNNEST(r.request)` of a read `r`).
  const resolved = new Map<string, PgExpr>();
  const valueOf = (alias: string): PgExpr => {
    let value = resolved.get(alias);
    if (value === undefined) {
      value = substitute(raw.get(alias)!.value);
      resolved.set(alias, value);
    }
    return value;
  };
  const substitute = <T>(tree: T): T =>
    mapNodes(tree, (n) => (n.kind === 'column' && n.name === 'value' && raw.has(n.table as string) ? valueOf(n.table as string) : n));
  return mapNodes(query, (n) => {
    if (n.kind === 'column' && n.name === 'value' && raw.has(n.table as string)) return valueOf(n.table as string);
    if (n.kind === 'select' && n.from !== undefined) return withoutReadUnnests(n as unknown as PgSelect, raw, valueOf, substitute);
    return n;
  });
}

/**
 * Records in `out` the UNNESTs of one FROM clause read by path: those marked `single` whose join
 * allows it. `link` is the join whose right operand `item` is (undefined for the first item).
 */
function collect(item: PgFrom, realJoin: boolean, link: PgJoin | undefined, out: Map<string, SingleRecord>): void {
  if (item.kind === 'join') {
    collect(item.left, realJoin, undefined, out);
    collect(item.right, realJoin, item, out);
    return;
  }
  if (item.kind !== 'function' || item.single === undefined) return;
  const left = link?.type === 'LEFT';
  const on = link?.on;
  const trueOn = on === undefined || (on.kind === 'literal' && on.value === true);
  if (realJoin ? left && trueOn : !left || trueOn) out.set(item.alias, item.single);
}

/** Whether a FROM clause has a RIGHT or FULL join, or a parenthesised join as a right operand. */
function needsRealJoin(item: PgFrom): boolean {
  if (item.kind !== 'join') return false;
  return item.type === 'RIGHT' || item.type === 'FULL' || item.right.kind === 'join' || needsRealJoin(item.left);
}

/** The SELECT without the UNNESTs read by path, and their guards (and INNER join conditions) in front of its WHERE. */
function withoutReadUnnests(
  select: PgSelect,
  read: ReadonlyMap<string, SingleRecord>,
  valueOf: (alias: string) => PgExpr,
  substitute: <T>(tree: T) => T,
): PgSelect {
  const guardOf = (alias: string) => ({ value: valueOf(alias), guard: substitute(read.get(alias)!.guard) });
  const guards: PgExpr[] = [];
  const isRead = (item: PgFrom): item is PgFunctionFrom => item.kind === 'function' && read.has(item.alias);
  const drop = (item: PgFrom): PgFrom | undefined => {
    if (isRead(item)) {
      addGuard(guards, guardOf(item.alias)); // the first FROM item: as a CROSS JOIN
      return undefined;
    }
    if (item.kind !== 'join') return item;
    const left = drop(item.left);
    if (isRead(item.right)) {
      if (item.type !== 'LEFT') {
        addGuard(guards, guardOf(item.right.alias));
        if (item.on) guards.push(item.on);
      }
      return left;
    }
    const right = item.right.kind === 'join' ? drop(item.right) : item.right;
    if (right === undefined) return left;
    // A join with nothing left of it is its right operand alone, as the resolver builds it.
    if (left === undefined) return right;
    return left === item.left && right === item.right ? item : { ...item, left, right };
  };
  const from = drop(select.from!);
  if (from === select.from && !guards.length) return select;
  const where = select.where;
  const conditions = [...dropImpliedGuards(guards, where), ...(where ? [where] : [])];
  return { ...select, from, where: conditions.length ? pg.and(...conditions) : undefined };
}

/**
 * A record's `IS NOT NULL` guard, replacing the guards of the records it is read through
 * (`m->'response'->0` is NULL whenever `m` is). perf: left in, the planner (cheapest qual first,
 * ties in written order) ran `metadata->0 IS NOT NULL` before `project = $1` and detoasted every
 * row of the window (BENCHMARKS.md, "guards").
 */
function addGuard(guards: PgExpr[], record: { value: PgExpr; guard: PgExpr }): void {
  for (let i = guards.length - 1; i >= 0; i--) {
    const guarded = guardedRecord(guards[i]);
    if (guarded && readsThrough(record.value, guarded)) guards.splice(i, 1);
  }
  guards.push(record.guard);
}

/**
 * The guards without those that a WHERE conjunct implies: a strict comparison of a leaf read
 * from the guarded record (`(r->>'status_code')::bigint >= 500`) is never true when the record is
 * NULL, so `r IS NOT NULL` drops no row the conjunct keeps. perf: each guard reads the record
 * again, one more decompression of `metadata` per row (BENCHMARKS.md, fix 6).
 */
function dropImpliedGuards(guards: readonly PgExpr[], where: PgExpr | undefined): PgExpr[] {
  if (!where) return [...guards];
  const conjuncts = andOperands(where);
  return guards.filter((g) => {
    const record = guardedRecord(g);
    return !(record && conjuncts.some((c) => rejectsNull(c, record)));
  });
}

function andOperands(e: PgExpr): PgExpr[] {
  return e.kind === 'andOr' && e.op === 'AND' ? e.operands.flatMap(andOperands) : [e];
}

/** Built-in operators that are strict (NULL in, NULL out), so a NULL leaf never passes; strict functions are functions.ts's. */
const STRICT_COMPARISONS = new Set(['=', '<>', '<', '<=', '>', '>=', '~', '~*', '~~', '!~~']);
const JSON_READS = new Set(['->', '->>', '#>', '#>>']);

/** Whether `condition` is NULL (so not true) whenever `record` is NULL. */
function rejectsNull(condition: PgExpr, record: PgExpr): boolean {
  switch (condition.kind) {
    case 'op':
      return STRICT_COMPARISONS.has(condition.op) && (readsFrom(condition.left, record) || readsFrom(condition.right, record));
    case 'is':
      return condition.test === 'NULL' && condition.negated && readsFrom(condition.operand, record);
    case 'in':
      return condition.list !== undefined && readsFrom(condition.operand, record);
    case 'between':
      return readsFrom(condition.operand, record);
    default:
      return false;
  }
}

/** Whether `e` is NULL whenever `record` is: a JSON read through it, under casts and strict functions of it. */
function readsFrom(e: PgExpr, record: PgExpr): boolean {
  if (e.kind === 'cast') return readsFrom(e.operand, record);
  if (e.kind === 'func') return isStrict(e.name) && e.args.some((a) => readsFrom(a, record));
  if (e.kind !== 'op' || !JSON_READS.has(e.op)) return false;
  return sameExpr(e.left, record) || readsFrom(e.left, record);
}

/** Whether `expr` is a `->` read through `inner` (structurally equal), so `inner IS NULL` makes it NULL. */
function readsThrough(expr: PgExpr, inner: PgExpr): boolean {
  for (let e = expr; e.kind === 'op' && e.op === '->'; e = e.left) {
    if (sameExpr(e.left, inner)) return true;
  }
  return false;
}
