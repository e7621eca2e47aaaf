/**
 * Decomposition of an aggregate query into per-hour partial aggregates and a merge: the query
 * half of the hourly split (src/query/hourlySplit.ts, docs/ARCHITECTURE.md "Hourly partials").
 *
 * Why: a 7-day report reads millions of index entries each time it loads, although all of it but
 * the last hour is history that no longer changes (or changes only by late events, which ingest
 * reports). As in Loki's and Cortex's query frontends, the query is cut into hours; a closed hour's
 * partial aggregates are computed once and cached, and each load merges them.
 *
 * For a translated query whose top level is one SELECT with GROUP BY (or only aggregates) over the
 * rows of one log table, whose aggregates are all count / sum / min / max / avg (FILTER allowed, no
 * DISTINCT, ORDER BY or OVER), without set operations, subqueries in expressions or now():
 *
 * - the PARTIAL query: the same WITH / FROM / WHERE, `SELECT <hour of the row's timestamp> AS h,
 *   <group keys> AS k0…, <partial aggregates> AS a0… GROUP BY h, keys` (avg as a sum and a count);
 * - the FINAL query, built once the partial query's column types are known: it reads partial rows
 *   from one json parameter (`json_to_recordset`), merges them per group (sum of counts, sum of
 *   sums, min of mins, sum/count for avg with avg's own result type), and applies the original
 *   select list, HAVING, ORDER BY, LIMIT and OFFSET over the merged values.
 *
 * The window: the log table's SELECT must filter its timestamp by two parameters, exactly as the
 * translator prints `t.timestamp > @start` / `t.timestamp <= @end` (optionally inside the `CASE WHEN
 * coalesce(@p, '') = '' THEN TRUE ELSE … END` of the default endpoints, seeds/queries.ts), and those
 * parameters may appear nowhere else. Then the same SQL with other values for them computes any
 * other window (start, end] of the same rows: no change of the tree is needed for that.
 *
 * Anything else gives `undefined`: the query runs whole, as before.
 */
import { LOG_SCHEMA, logTableName } from '../catalog.js';
import type * as P from './ast.js';
import { pg } from './ast.js';
import { isScalarFunction } from './functions.js';
import { offsetsNothing } from './narrow.js';
import { printExpr, printQuery, ident } from './print.js';
import { mapChildren, sameExpr, some } from './transform.js';

export interface Decomposition {
  /** The partial query: columns h (epoch seconds of the hour, bigint), k0…, a0…; same `$n` as the original. */
  readonly partialSql: string;
  /** The log table read (schema-qualified name): the unit of the write versions. */
  readonly table: string;
  /** Index into the parameter values ($n − 1) of the window's start (exclusive) and end (inclusive). */
  readonly startParam: number;
  readonly endParam: number;
  /** Number of group keys (columns k0…) and of partial aggregates (a0…). */
  readonly keys: number;
  readonly partials: number;
  /** The final query, given the partial query's column types (Postgres type names, in column order). */
  finalQuery(types: readonly string[]): FinalQuery | undefined;
}

export interface FinalQuery {
  /**
   * `$1` is the partial rows as one JSON array of objects keyed h, k0…, a0… (`json_to_recordset`:
   * json rather than jsonb, as nothing but this one pass reads it, and Postgres reads ~100k partial
   * rows of a 7-day grouped report faster so); then `params`.
   */
  readonly sql: string;
  /** For `$2`…: the index into the original parameter values of each. */
  readonly params: readonly number[];
}

type Merge = 'count' | 'sum' | 'min' | 'max' | { avg: [sum: number, count: number] };
interface PartialAggregate {
  readonly node: P.PgFunc;
  /** Index of its first partial column; avg has two (sum, count). */
  readonly column: number;
  readonly merge: Merge;
}

const DECOMPOSABLE = new Set(['count', 'sum', 'min', 'max', 'avg']);
const HOUR_ALIAS = 'h';
const TS_COLUMN = '__lq_ts';

export function decompose(query: P.PgQuery): Decomposition | undefined {
  try {
    return decomposeOrThrow(query);
  } catch (e) {
    if (e instanceof NotDecomposable) return undefined;
    throw e;
  }
}

class NotDecomposable extends Error {}
function refuse(why: string): never {
  throw new NotDecomposable(why);
}

function decomposeOrThrow(query: P.PgQuery): Decomposition {
  const s = query.body;
  if (s.kind !== 'select' || s.distinct || !s.from) refuse('not one SELECT');
  // now() and friends: a cached hour must not depend on when it was computed.
  const printed = printQuery(query);
  if (/\bnow\(|\bclock_timestamp\(|\brandom\(/i.test(printed)) refuse('time-dependent');
  if (query.ctes.length > 1) refuse('several CTEs');

  const aggregates: PartialAggregate[] = [];
  let columns = 0;
  const isHandledAggregate = (e: P.PgExpr): boolean => e.kind === 'func' && DECOMPOSABLE.has(e.name);
  const collect = (e: P.PgExpr): void => {
    noSubquery(e);
    some(e, (n) => {
      if (n.kind !== 'func') return false;
      if (n.over) refuse('window function');
      if (isHandledAggregate(n)) {
        if (n.distinct || n.orderBy?.length || n.withinGroup?.length) refuse('DISTINCT or ordered aggregate');
        if (n.args.some((a) => some(a, (x) => x.kind === 'func' && !isScalarFunction(x.name)))) refuse('nested aggregate');
        if (!aggregates.some((a) => sameExpr(a.node, n))) {
          const merge: Merge = n.name === 'avg' ? { avg: [columns, columns + 1] } : (n.name as Merge);
          aggregates.push({ node: n, column: columns, merge });
          columns += n.name === 'avg' ? 2 : 1;
        }
        return false;
      }
      if (!isScalarFunction(n.name)) refuse(`not decomposable: ${n.name}`);
      return false;
    });
  };
  // Aggregates below an aggregate's own node are not looked at again (some() stops at `false` only
  // per node), so nested aggregates are refused above and collecting is per top-level call.
  for (const t of s.targets) collect(t.expr);
  if (s.having) collect(s.having);
  for (const o of query.orderBy) collect(o.expr);
  if (aggregates.length === 0 && s.groupBy.length === 0) refuse('no aggregation');

  const keys = s.groupBy.map((g) => {
    const ordinal = ordinalOf(g);
    const key = ordinal === undefined ? g : s.targets[ordinal - 1]?.expr;
    if (!key) refuse('bad ordinal');
    if (some(key, (n) => n.kind === 'func' && !isScalarFunction(n.name))) refuse('aggregate in GROUP BY');
    noSubquery(key);
    return key;
  });
  if (s.where) noSubquery(s.where);

  // The FROM chain down to the log table: where the row's timestamp is, and the window's parameters.
  const ctes = new Map(query.ctes.map((c) => [c.name, c.query]));
  const reach = reachTable(s.from, ctes);
  if (!reach.ts) refuse('no log table');
  // The log table read directly by the top SELECT: its WHERE is the one with the window.
  const window = findWindow(reach.logSelect ?? s, reach.logAlias!, printed);

  const hour = pg.cast(
    pg.extract(
      'epoch',
      pg.func('date_bin', [
        pg.cast(pg.literal('1 hour'), 'interval'),
        reach.ts,
        pg.cast(pg.literal('1970-01-01 00:00:00+00'), 'timestamptz'),
      ]),
    ),
    'bigint',
  );
  const partialTargets: Array<{ expr: P.PgExpr; name: string }> = [{ expr: hour, name: HOUR_ALIAS }];
  keys.forEach((k, i) => partialTargets.push({ expr: k, name: `k${i}` }));
  for (const a of aggregates) {
    if (a.node.name === 'avg') {
      const { name: _name, ...rest } = a.node;
      partialTargets.push({ expr: { ...rest, name: 'sum' }, name: `a${a.column}` });
      partialTargets.push({ expr: { ...rest, name: 'count' }, name: `a${a.column + 1}` });
    } else partialTargets.push({ expr: a.node, name: `a${a.column}` });
  }
  const partial: P.PgQuery = {
    kind: 'query',
    ctes: reach.ctes,
    orderBy: [],
    body: {
      kind: 'select',
      distinct: false,
      targets: partialTargets,
      from: reach.from,
      where: s.where,
      groupBy: partialTargets.slice(0, 1 + keys.length).map((_, i) => pg.number(String(i + 1))),
    },
  };
  const partialSql = printQuery(partial);

  return {
    partialSql,
    table: reach.table!,
    startParam: window.start,
    endParam: window.end,
    keys: keys.length,
    partials: columns,
    finalQuery: (types) => {
      try {
        return finalQuery(query, s, keys, aggregates, types);
      } catch (e) {
        if (e instanceof NotDecomposable) return undefined;
        throw e;
      }
    },
  };
}

function ordinalOf(e: P.PgExpr): number | undefined {
  return e.kind === 'literal' && typeof e.value === 'number' && Number.isInteger(e.value) ? e.value : undefined;
}

function noSubquery(e: P.PgExpr): void {
  if (some(e, (n) => n.kind === 'subquery' || (n.kind === 'in' && !!n.query))) refuse('subquery');
}

interface Reach {
  from: P.PgFrom;
  ctes: P.PgQuery['ctes'];
  /** The row's timestamp, in scope of the level above `from`. */
  ts?: P.PgExpr;
  table?: string;
  logSelect?: P.PgSelect;
  logAlias?: string;
}

/**
 * Walks the FROM down to the log table: a `logs.<table>`, or the one CTE that selects rows of one,
 * through plain derived tables (no grouping, DISTINCT or LIMIT: one row out per row in) and
 * lateral unnests of the row's arrays. Derived tables get the timestamp as an extra column.
 */
function reachTable(from: P.PgFrom, ctes: Map<string, P.PgQuery>): Reach {
  switch (from.kind) {
    case 'table': {
      if (from.schema === LOG_SCHEMA) {
        return {
          from,
          ctes: [],
          ts: pg.column(from.alias, 'timestamp'),
          table: logTableName(from.name),
          logSelect: undefined,
          logAlias: from.alias,
        };
      }
      const cte = from.schema === undefined ? ctes.get(from.name) : undefined;
      if (!cte) refuse('unknown table');
      const inner = plainSelect(cte);
      if (inner.from?.kind !== 'table' || inner.from.schema !== LOG_SCHEMA) refuse('CTE not over a log table');
      const alias = inner.from.alias;
      const ts = inner.targets.find((t) => t.name === 'timestamp');
      if (!ts || !sameExpr(ts.expr, pg.column(alias, 'timestamp'))) refuse('CTE without the timestamp');
      return {
        from,
        ctes: [{ name: from.name, query: cte }],
        ts: pg.column(from.alias, 'timestamp'),
        table: logTableName(inner.from.name),
        logSelect: inner,
        logAlias: alias,
      };
    }
    case 'function':
      noSubquery(from.arg);
      return { from, ctes: [] };
    case 'join': {
      if (from.type === 'RIGHT' || from.type === 'FULL') refuse('outer join');
      if (from.on) noSubquery(from.on);
      const left = reachTable(from.left, ctes);
      const right = reachTable(from.right, ctes);
      if (left.ts && right.ts) refuse('two log tables');
      if (right.ts && from.type !== 'CROSS' && from.type !== 'INNER') refuse('log table on the outer side');
      const found = left.ts ? left : right;
      return { ...found, from: { ...from, left: left.from, right: right.from }, ctes: [...left.ctes, ...right.ctes] };
    }
    case 'derived': {
      const inner = plainSelect(from.query);
      if (from.query.ctes.length) refuse('CTE in a derived table');
      const below = reachTable(inner.from ?? refuse('derived without FROM'), ctes);
      if (!below.ts) refuse('derived without a log table');
      const query: P.PgQuery = {
        ...from.query,
        body: { ...inner, from: below.from, targets: [...inner.targets, { expr: below.ts, name: TS_COLUMN }] },
      };
      // The log table's own SELECT is the derived one when the derived table reads logs.<table> directly.
      const logSelect = below.logSelect ?? inner;
      return { ...below, from: { ...from, query }, ts: pg.column(from.alias, TS_COLUMN), logSelect };
    }
  }
}

/** A SELECT that passes rows through one for one: no grouping, aggregates, DISTINCT, LIMIT or OFFSET (but narrow.ts's fence, or OFFSET 0). */
function plainSelect(q: P.PgQuery): P.PgSelect {
  const s = q.body;
  if (s.kind !== 'select' || s.distinct || s.groupBy.length || s.having) refuse('not a plain SELECT');
  if (q.limit || !offsetsNothing(q.offset)) refuse('LIMIT below');
  for (const e of [...s.targets.map((t) => t.expr), ...(s.where ? [s.where] : [])]) {
    noSubquery(e);
    if (some(e, (n) => n.kind === 'func' && !isScalarFunction(n.name))) refuse('aggregate or window below');
  }
  return s;
}

/**
 * The window's two parameters in the log table's WHERE: AND-ed conditions printed as the
 * translator prints `ts > @start` and `ts <= @end`, bare or inside the optional-bound CASE of
 * seeds/queries.ts; each parameter used nowhere else in the query.
 */
function findWindow(logSelect: P.PgSelect | undefined, alias: string, printed: string): { start: number; end: number } {
  if (!logSelect?.where) refuse('no window');
  const conjuncts: P.PgExpr[] = [];
  const flatten = (e: P.PgExpr): void => (e.kind === 'andOr' && e.op === 'AND' ? e.operands.forEach(flatten) : void conjuncts.push(e));
  flatten(logSelect.where);
  const ts = printExpr(pg.column(alias, 'timestamp')).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const bound = (op: string): RegExp =>
    new RegExp(
      `^(?:CASE WHEN \\(coalesce\\(\\$(\\d+)::text, ''\\) = ''\\) THEN TRUE ELSE \\(${ts} ${op} logs\\.bq_timestamp\\(\\$(\\d+)::text\\)\\) END|\\(${ts} ${op} logs\\.bq_timestamp\\(\\$(\\d+)::text\\)\\))$`,
    );
  const find = (op: string): { index: number; uses: number } => {
    const found: Array<{ index: number; uses: number }> = [];
    for (const c of conjuncts) {
      const m = bound(op).exec(printExpr(c));
      if (!m) continue;
      if (m[1] !== undefined && m[1] !== m[2]) continue;
      found.push({ index: Number(m[1] ?? m[3]), uses: m[1] !== undefined ? 2 : 1 });
    }
    if (found.length !== 1) refuse('window bound not found once');
    return found[0];
  };
  const start = find('>');
  const end = find('<=');
  if (start.index === end.index) refuse('one parameter for both bounds');
  for (const b of [start, end]) {
    const uses = printed.match(new RegExp(`\\$${b.index}(?!\\d)`, 'g'))?.length ?? 0;
    if (uses !== b.uses) refuse('window parameter used elsewhere');
  }
  return { start: start.index - 1, end: end.index - 1 };
}

/** Postgres type names of the partial columns that survive a trip through JSON text unchanged. */
const RECORD_TYPES = new Set([
  'bigint',
  'integer',
  'smallint',
  'numeric',
  'float8',
  'text',
  'boolean',
  'timestamptz',
  'timestamp',
  'date',
  'interval',
]);

function finalQuery(
  query: P.PgQuery,
  s: P.PgSelect,
  keys: readonly P.PgExpr[],
  aggregates: readonly PartialAggregate[],
  types: readonly string[],
): FinalQuery {
  if (types.length !== 1 + keys.length + aggregates.reduce((n, a) => n + (a.merge instanceof Object ? 2 : 1), 0)) refuse('columns');
  if (!types.every((t) => RECORD_TYPES.has(t))) refuse('a column type that does not round-trip');
  const col = (name: string): P.PgExpr => pg.column('p', name);
  const aType = (i: number): string => types[1 + keys.length + i];
  const merged = (a: PartialAggregate): P.PgExpr => {
    const c = col(`a${a.column}`);
    switch (a.merge) {
      case 'count':
        return pg.cast(pg.func('coalesce', [pg.func('sum', [c]), pg.number('0')]), 'bigint');
      case 'sum':
        return pg.cast(pg.func('sum', [c]), aType(a.column) as P.PgTypeName);
      case 'min':
      case 'max':
        return pg.func(a.merge, [c]);
      default: {
        // avg = sum / count, computed as avg computes it: numeric division for integer and numeric
        // input, float8 division for float8 input (float8_avg, numeric_avg in Postgres).
        const sumType = aType(a.column);
        const as = sumType === 'float8' ? 'float8' : sumType === 'numeric' || sumType === 'bigint' ? 'numeric' : refuse('avg type');
        const count = pg.func('nullif', [pg.func('sum', [col(`a${a.column + 1}`)]), pg.number('0')]);
        return pg.op('/', pg.cast(pg.func('sum', [c]), as), pg.cast(count, as));
      }
    }
  };
  const params: number[] = [];
  const param = (p: P.PgParam): P.PgExpr => {
    let i = params.indexOf(p.index - 1);
    if (i < 0) i = params.push(p.index - 1) - 1;
    return pg.param(i + 2);
  };
  const rewrite = (e: P.PgExpr): P.PgExpr => {
    if (e.kind === 'func' && DECOMPOSABLE.has(e.name)) {
      const a = aggregates.find((x) => sameExpr(x.node, e));
      return a ? merged(a) : refuse('aggregate not collected');
    }
    const k = keys.findIndex((key) => sameExpr(key, e));
    if (k >= 0) return col(`k${k}`);
    if (e.kind === 'column') refuse('column neither grouped nor aggregated');
    if (e.kind === 'param') return param(e);
    return mapChildren(e, rewrite);
  };
  const targets = s.targets.map((t) => `${printExpr(rewrite(t.expr))} AS ${ident(t.name)}`);
  const orders = query.orderBy.map((o) => {
    const expr = ordinalOf(o.expr) !== undefined ? o.expr : rewrite(o.expr);
    return `${printExpr(expr)} ${o.desc ? 'DESC' : 'ASC'}${o.nulls ? ` NULLS ${o.nulls}` : ''}`;
  });
  const having = s.having && printExpr(rewrite(s.having));
  const limit = query.limit && printExpr(rewrite(query.limit));
  const offset = query.offset && printExpr(rewrite(query.offset));
  const names = ['h', ...keys.map((_, i) => `k${i}`), ...Array.from({ length: types.length - 1 - keys.length }, (_, i) => `a${i}`)];
  const record = names.map((n, i) => `${ident(n)} ${types[i]}`).join(', ');
  let sql = `SELECT ${targets.join(', ')}\nFROM json_to_recordset($1::json) AS "p"(${record})`;
  if (keys.length) sql += `\nGROUP BY ${keys.map((_, i) => printExpr(col(`k${i}`))).join(', ')}`;
  if (having) sql += `\nHAVING ${having}`;
  if (orders.length) sql += `\nORDER BY ${orders.join(', ')}`;
  if (limit) sql += `\nLIMIT ${limit}`;
  if (offset) sql += `\nOFFSET ${offset}`;
  return { sql, params };
}
