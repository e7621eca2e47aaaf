/**
 * Postgres printer: one entry per node kind, the only place that makes SQL text.
 *
 *   printQuery(pgQuery)  →  'SELECT "t0"."id" AS "id" FROM "logs"."edge" AS "t0" WHERE …'
 *
 * Every identifier is double-quoted and every compound expression parenthesised, so the
 * text never depends on keyword lists or operator precedence. Values never appear: parameters
 * print as `$n::text`.
 */
import { SqlLimitError } from '../errors.js';
import type * as P from './ast.js';

/**
 * security: the tree may share one expression in many places (a select alias in HAVING, the
 * operand of a simple CASE per WHEN), and text grows with every copy: a 42 KB query printed 20 MB
 * of SQL, then took 30 s and 1.4 GB in validation, and a 10 KB literal behind an alias used 500
 * times makes 5 MB. During one outermost printQuery the size of the text is estimated as it is
 * made (leaves by their length, other nodes a few characters each), and printing stops past
 * MAX_PRINTED_CHARS: about ten times the largest translation of a 100 KB query
 * (test/security/corpus.ts, hugeOrDeepInput).
 */
export const MAX_PRINTED_CHARS = 1024 * 1024;
const LEAVES: ReadonlySet<P.PgExprKind> = new Set(['column', 'literal', 'param']);
let printing = 0;
let printed = 0;

function counted(size: number): void {
  if (printing > 0 && (printed += size) > MAX_PRINTED_CHARS) {
    throw new SqlLimitError(`the translated query would be larger than ${MAX_PRINTED_CHARS / 1024} KB; use fewer repeated expressions, aliases or columns`, '', 0);
  }
}

export function printQuery(q: P.PgQuery): string {
  if (printing++ === 0) printed = 0;
  try {
    counted(16);
    return printQueryText(q);
  } finally {
    printing--;
  }
}

function printQueryText(q: P.PgQuery): string {
  const parts: string[] = [];
  if (q.ctes.length) parts.push('WITH ' + q.ctes.map((c) => `${ident(c.name)} AS (${printQuery(c.query)})`).join(',\n'));
  parts.push(printBody(q.body));
  if (q.orderBy.length) parts.push('ORDER BY ' + q.orderBy.map(printOrder).join(', '));
  if (q.limit) parts.push('LIMIT ' + printExpr(q.limit));
  if (q.offset) parts.push('OFFSET ' + printExpr(q.offset));
  return parts.join('\n');
}

function printBody(b: P.PgQuery['body']): string {
  switch (b.kind) {
    case 'select': return printSelect(b);
    case 'setOp': return `${printOperand(b.left)}\n${b.op}\n${printOperand(b.right)}`;
    case 'query': return `(${printQuery(b)})`;
  }
}

function printOperand(b: P.PgQuery['body']): string {
  return b.kind === 'select' ? `(${printSelect(b)})` : printBody(b);
}

function printSelect(s: P.PgSelect): string {
  const targets = s.targets.map((t) => `${printExpr(t.expr)} AS ${ident(t.name)}`).join(', ');
  let sql = `SELECT ${s.distinct ? 'DISTINCT ' : ''}${targets}`;
  if (s.from) sql += `\nFROM ${printFrom(s.from)}`;
  if (s.where) sql += `\nWHERE ${printExpr(s.where)}`;
  if (s.groupBy.length) sql += `\nGROUP BY ${s.groupBy.map(printExpr).join(', ')}`;
  if (s.having) sql += `\nHAVING ${printExpr(s.having)}`;
  return sql;
}

const FROM_PRINTERS: { [K in P.PgFromKind]: (node: Extract<P.PgFrom, { kind: K }>) => string } = {
  table: (t) => `${t.schema ? ident(t.schema) + '.' : ''}${ident(t.name)} AS ${ident(t.alias)}`,
  derived: (d) => `(${printQuery(d.query)}) AS ${ident(d.alias)}`,
  function: (fn) => `LATERAL ${fn.fn}(${printExpr(fn.arg)}) AS ${ident(fn.alias)}(${ident(fn.column)})`,
  join: (j) => {
    const right = j.right.kind === 'join' ? `(${printFrom(j.right)})` : printFrom(j.right);
    const kind = j.type === 'CROSS' ? 'CROSS JOIN' : j.type === 'LEFT' ? 'LEFT JOIN' : 'JOIN';
    const condition = j.using?.length ? ` USING (${j.using.map(ident).join(', ')})` : j.on ? ` ON ${printExpr(j.on)}` : '';
    return `${printFrom(j.left)}\n  ${kind} ${right}${condition}`;
  },
};

function printFrom(node: P.PgFrom): string {
  return (FROM_PRINTERS[node.kind] as (n: P.PgFrom) => string)(node);
}

function printOrder(o: P.PgOrder): string {
  return `${printExpr(o.expr)}${o.desc ? ' DESC' : ' ASC'}${o.nulls ? ` NULLS ${o.nulls}` : ''}`;
}

const EXPR_PRINTERS: { [K in P.PgExprKind]: (node: Extract<P.PgExpr, { kind: K }>) => string } = {
  column: (c) => (c.table ? `${ident(c.table)}.${ident(c.name)}` : ident(c.name)),
  literal: (l) => printLiteral(l),
  param: (p) => `$${p.index}::text`,
  op: (o) => `(${printExpr(o.left)} ${o.op} ${printExpr(o.right)})`,
  not: (n) => `(NOT ${printExpr(n.operand)})`,
  neg: (n) => `(- ${printExpr(n.operand)})`,
  andOr: (a) => `(${a.operands.map(printExpr).join(` ${a.op} `)})`,
  is: (i) => `(${printExpr(i.operand)} IS ${i.negated ? 'NOT ' : ''}${i.test})`,
  func: (fn) => {
    const args = fn.star ? '*' : (fn.distinct ? 'DISTINCT ' : '') + fn.args.map(printExpr).join(', ');
    const order = fn.orderBy?.length ? ` ORDER BY ${fn.orderBy.map(printOrder).join(', ')}` : '';
    let sql = `${fn.name}(${args}${order})`;
    if (fn.withinGroup) sql += ` WITHIN GROUP (ORDER BY ${fn.withinGroup.map(printOrder).join(', ')})`;
    if (fn.filter) sql += ` FILTER (WHERE ${printExpr(fn.filter)})`;
    return sql;
  },
  cast: (c) => `(${printExpr(c.operand)})::${c.type}`,
  case: (c) => {
    const operand = c.operand ? ' ' + printExpr(c.operand) : '';
    const whens = c.whens.map((w) => ` WHEN ${printExpr(w.when)} THEN ${printExpr(w.then)}`).join('');
    return `CASE${operand}${whens}${c.otherwise ? ' ELSE ' + printExpr(c.otherwise) : ''} END`;
  },
  in: (i) => `(${printExpr(i.operand)} ${i.negated ? 'NOT IN' : 'IN'} (${i.query ? printQuery(i.query) : i.list!.map(printExpr).join(', ')}))`,
  between: (b) => `(${printExpr(b.operand)} ${b.negated ? 'NOT BETWEEN' : 'BETWEEN'} ${printExpr(b.low)} AND ${printExpr(b.high)})`,
  subquery: (s) => `${s.exists ? 'EXISTS ' : ''}(${printQuery(s.query)})`,
  subscript: (s) => `(${printExpr(s.base)})[${printExpr(s.index)}]`,
  array: (a) => `ARRAY[${a.items.map(printExpr).join(', ')}]`,
  extract: (e) => `extract(${e.field} from ${printExpr(e.operand)})`,
};

export function printExpr(node: P.PgExpr): string {
  const text = (EXPR_PRINTERS[node.kind] as (n: P.PgExpr) => string)(node);
  counted(LEAVES.has(node.kind) ? text.length : 8);
  return text;
}

function printLiteral(l: P.PgLiteral): string {
  if (l.value === null) return 'NULL';
  if (typeof l.value === 'boolean') return l.value ? 'TRUE' : 'FALSE';
  if (typeof l.value === 'number') return l.numeric ?? String(l.value);
  // standard_conforming_strings is on (and cannot be changed by a query), so only quotes need doubling.
  return l.value.includes("'") ? `'${l.value.replace(/'/g, "''")}'` : `'${l.value}'`;
}

export function ident(name: string): string {
  return name.includes('"') ? `"${name.replace(/"/g, '""')}"` : `"${name}"`;
}
