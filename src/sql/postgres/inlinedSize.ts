/**
 * security: a bound on the expression size Postgres' planner will see once it has inlined CTEs
 * and subqueries in FROM, checked on the tree about to be printed.
 *
 * Why: Postgres inlines a CTE read once, and pulls up a simple subquery in FROM, substituting
 * the inner expressions for the outer column references. A chain where each level reads its
 * input column twice (`c1 as (select concat(s, s) as s from c0)`, …, `c23`) doubles the
 * expression per level: the printed SQL is small, but the planned expression has 2^23 nodes.
 * Planning took past 60 s and 13.5 GB, and neither a cancel nor `statement_timeout` reaches the
 * planner (issue 25, finding 1). The printer's own cap (MAX_PRINTED_CHARS) cannot see this: the
 * text is linear, only the inlining is exponential.
 *
 * The estimate is conservative: every CTE and derived table counts as inlined (whether Postgres
 * would inline it or not), a column of a UNION counts as its largest branch, and a reference
 * to a column of a CTE or derived table counts as that column's whole inlined expression. Every
 * place an expression appears (select list, WHERE, GROUP BY, HAVING, ORDER BY, JOIN conditions,
 * the argument of an UNNEST) adds its size to the total. Measured on this machine (noisy):
 * 2^16 inlined nodes plan in 0.6 s, 2^17 in 1.1 s; the largest translation of the test corpora
 * and the Studio queries over `logs.all` stays far below MAX_INLINED_NODES (test/sql/planner-bound.test.ts).
 *
 * Aliases (`t0`, `t1`, …) are unique in one translation (TranslationState.alias), so a column
 * reference is resolved through one map for the whole query; CTE names are scoped per WITH.
 */
import { SqlLimitError } from '../errors.js';
import type * as P from './ast.js';

/** Inlined expression nodes a query may give the planner: about 0.3 s of planning here. */
export const MAX_INLINED_NODES = 32_768;

type ColumnSizes = ReadonlyMap<string, number>;

/** Throws SqlLimitError (a 400) when the planner would see more than MAX_INLINED_NODES nodes; `text` positions it. */
export function checkInlinedSize(query: P.PgQuery, text: string): void {
  new InlinedSize(text).query(query, new Map());
}

class InlinedSize {
  private total = 0;
  /** Output column sizes of every FROM item, by its alias. */
  private readonly aliases = new Map<string, ColumnSizes>();
  /**
   * Expressions already walked: a shared subtree (a select alias used twice) is walked once and
   * counted per use, with `inner` the cost of the subqueries inside it, planned once per use too.
   */
  private readonly sizes = new Map<object, { size: number; inner: number }>();

  constructor(private readonly text: string) {}

  private add(size: number): void {
    this.total += size;
    if (this.total > MAX_INLINED_NODES) {
      throw new SqlLimitError(
        `the query would give the Postgres planner more than ${MAX_INLINED_NODES} expression nodes once its CTEs and subqueries are inlined (the limit on inlined expression size); reference each column of a CTE or subquery fewer times per level, or use fewer levels`,
        this.text,
        0,
      );
    }
  }

  /** The output column sizes of `q`; adds what its expressions cost to the total. */
  query(q: P.PgQuery, outer: ReadonlyMap<string, ColumnSizes>): number[] {
    let ctes = outer;
    if (q.ctes.length) {
      const scoped = new Map(outer);
      for (const cte of q.ctes) scoped.set(cte.name, named(cte.query, this.query(cte.query, scoped)));
      ctes = scoped;
    }
    const columns = this.body(q.body, ctes);
    for (const o of q.orderBy) this.add(this.expr(o.expr, ctes));
    if (q.limit) this.add(this.expr(q.limit, ctes));
    if (q.offset) this.add(this.expr(q.offset, ctes));
    return columns;
  }

  private body(body: P.PgQuery['body'], ctes: ReadonlyMap<string, ColumnSizes>): number[] {
    // A long UNION ALL is a left-deep chain of setOps: walked with a loop, not one call per branch.
    const branches: Exclude<P.PgQuery['body'], P.PgSetOp>[] = [];
    const pending: P.PgQuery['body'][] = [body];
    while (pending.length) {
      const b = pending.pop()!;
      if (b.kind === 'setOp') pending.push(b.right, b.left);
      else branches.push(b);
    }
    let columns: number[] = [];
    for (const b of branches) {
      const sizes = b.kind === 'query' ? this.query(b, ctes) : this.select(b, ctes);
      columns = columns.length ? columns.map((s, i) => Math.max(s, sizes[i] ?? 1)) : sizes;
    }
    return columns;
  }

  private select(s: P.PgSelect, ctes: ReadonlyMap<string, ColumnSizes>): number[] {
    if (s.from) this.from(s.from, ctes);
    const columns = s.targets.map((t) => {
      const size = this.expr(t.expr, ctes);
      this.add(size);
      return size;
    });
    for (const e of [s.where, s.having, ...s.groupBy]) if (e) this.add(this.expr(e, ctes));
    return columns;
  }

  private from(f: P.PgFrom, ctes: ReadonlyMap<string, ColumnSizes>): void {
    switch (f.kind) {
      case 'table':
        this.aliases.set(f.alias, (f.schema === undefined && ctes.get(f.name)) || new Map());
        return;
      case 'derived': {
        const columns = this.query(f.query, ctes);
        this.aliases.set(f.alias, named(f.query, columns));
        return;
      }
      case 'function':
        this.add(this.expr(f.arg, ctes));
        this.aliases.set(f.alias, new Map());
        return;
      case 'join':
        this.from(f.left, ctes);
        this.from(f.right, ctes);
        if (f.on) this.add(this.expr(f.on, ctes));
        return;
    }
  }

  /** Nodes of `e` with every column reference replaced by the inlined expression it stands for. */
  private expr(e: P.PgExpr, ctes: ReadonlyMap<string, ColumnSizes>): number {
    const known = this.sizes.get(e);
    if (known !== undefined) {
      this.add(known.inner);
      return known.size;
    }
    const before = this.total;
    let size = 1;
    const children = (...nodes: (P.PgExpr | undefined)[]): void => {
      for (const n of nodes) if (n) size += this.expr(n, ctes);
    };
    const orders = (list: readonly P.PgOrder[] | undefined): void => list?.forEach((o) => children(o.expr));
    switch (e.kind) {
      case 'column':
        size = (e.table !== undefined && this.aliases.get(e.table)?.get(e.name)) || 1;
        break;
      case 'literal':
      case 'param':
        break;
      case 'op':
        children(e.left, e.right);
        break;
      case 'not':
      case 'neg':
      case 'is':
      case 'cast':
      case 'extract':
        children(e.operand);
        break;
      case 'andOr':
      case 'array':
        children(...(e.kind === 'andOr' ? e.operands : e.items));
        break;
      case 'func':
        children(...e.args, e.filter);
        orders(e.orderBy);
        orders(e.withinGroup);
        if (e.over) {
          children(...e.over.partitionBy);
          orders(e.over.orderBy);
          children(e.over.frame?.start.offset, e.over.frame?.end.offset);
        }
        break;
      case 'case':
        children(e.operand, e.otherwise);
        for (const w of e.whens) children(w.when, w.then);
        break;
      case 'in':
        children(e.operand, ...(e.list ?? []));
        // A subquery is planned on its own (a SubPlan): its cost goes to the total, not into this expression.
        if (e.query) this.query(e.query, ctes);
        break;
      case 'between':
        children(e.operand, e.low, e.high);
        break;
      case 'subquery':
        this.query(e.query, ctes);
        break;
      case 'subscript':
        children(e.base, e.index, e.upper);
        break;
      case 'any':
        children(e.operand, e.array);
        break;
    }
    this.sizes.set(e, { size, inner: this.total - before });
    return size;
  }
}

/** Output column sizes by name: a query's names are those of its first SELECT. */
function named(q: P.PgQuery, sizes: readonly number[]): ColumnSizes {
  let body: P.PgQuery['body'] = q.body;
  while (body.kind !== 'select') body = body.kind === 'setOp' ? body.left : body.body;
  const out = new Map<string, number>();
  body.targets.forEach((t, i) => out.set(t.name, Math.max(out.get(t.name) ?? 0, sizes[i] ?? 1)));
  return out;
}
