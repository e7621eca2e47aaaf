/**
 * Postgres printer: one entry per node kind, the only place that makes SQL text.
 *
 *   printQuery(pgQuery)  →  'SELECT "t0"."id" AS "id" FROM "logs"."edge" AS "t0" WHERE …'
 *
 * Every identifier is double-quoted and every compound expression parenthesised, so the
 * text never depends on keyword lists or operator precedence. Values never appear: parameters
 * print as `$n::text`.
 *
 * perf: the writers append to one string (`sql += …`, a rope that is flattened once at the end)
 * instead of returning a string per node that its parent copies into a template or a join: with
 * joins at every level, the text of a deep node would be copied once per level above it.
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
let printing = 0;
let printed = 0;

function counted(size: number): void {
  if (printing > 0 && (printed += size) > MAX_PRINTED_CHARS) {
    throw new SqlLimitError(
      `the translated query would be larger than ${MAX_PRINTED_CHARS / 1024} KB; use fewer repeated expressions, aliases or columns`,
      '',
      0,
    );
  }
}

/** The text being written; printQuery and printExpr start a fresh one and restore the caller's. */
let sql = '';

export function printQuery(q: P.PgQuery): string {
  if (printing++ === 0) printed = 0;
  const outer = sql;
  sql = '';
  try {
    writeQuery(q);
    const text = sql;
    // Reading a character makes V8 flatten the rope now, so the caller gets flat text and its
    // cost is counted here rather than in whatever reads the text first.
    if (printing === 1) text.charCodeAt(0);
    return text;
  } finally {
    sql = outer;
    printing--;
  }
}

export function printExpr(node: P.PgExpr): string {
  const outer = sql;
  sql = '';
  try {
    writeExpr(node);
    return sql;
  } finally {
    sql = outer;
  }
}

/** A query, counted as 16 characters plus its parts. */
function writeQuery(q: P.PgQuery): void {
  counted(16);
  if (q.ctes.length) {
    sql += 'WITH ';
    for (let k = 0; k < q.ctes.length; k++) {
      const c = q.ctes[k];
      if (k) sql += ',\n';
      sql += ident(c.name) + ' AS (';
      writeQuery(c.query);
      sql += ')';
    }
    sql += '\n';
  }
  writeBody(q.body);
  if (q.orderBy.length) {
    sql += '\nORDER BY ';
    writeOrders(q.orderBy);
  }
  if (q.limit) {
    sql += '\nLIMIT ';
    writeExpr(q.limit);
  }
  if (q.offset) {
    sql += '\nOFFSET ';
    writeExpr(q.offset);
  }
}

function writeBody(b: P.PgQuery['body']): void {
  switch (b.kind) {
    case 'select':
      writeSelect(b);
      return;
    case 'setOp':
      writeOperand(b.left);
      sql += '\n' + b.op + '\n';
      writeOperand(b.right);
      return;
    case 'query':
      sql += '(';
      writeQuery(b);
      sql += ')';
      return;
  }
}

function writeOperand(b: P.PgQuery['body']): void {
  if (b.kind !== 'select') return writeBody(b);
  sql += '(';
  writeSelect(b);
  sql += ')';
}

function writeSelect(s: P.PgSelect): void {
  sql += s.distinct ? 'SELECT DISTINCT ' : 'SELECT ';
  for (let k = 0; k < s.targets.length; k++) {
    const t = s.targets[k];
    if (k) sql += ', ';
    writeExpr(t.expr);
    sql += ' AS ' + ident(t.name);
  }
  if (s.from) {
    sql += '\nFROM ';
    writeFrom(s.from);
  }
  if (s.where) {
    sql += '\nWHERE ';
    writeExpr(s.where);
  }
  if (s.groupBy.length) {
    sql += '\nGROUP BY ';
    writeList(s.groupBy, ', ');
  }
  if (s.having) {
    sql += '\nHAVING ';
    writeExpr(s.having);
  }
}

const FROM_WRITERS: { [K in P.PgFromKind]: (node: Extract<P.PgFrom, { kind: K }>) => void } = {
  table: (t) => {
    sql += (t.schema ? ident(t.schema) + '.' : '') + ident(t.name) + ' AS ' + ident(t.alias);
  },
  derived: (d) => {
    sql += '(';
    writeQuery(d.query);
    sql += ') AS ' + ident(d.alias);
  },
  function: (fn) => {
    sql += 'LATERAL ' + fn.fn + '(';
    writeExpr(fn.arg);
    sql += fn.ordinality ? ') WITH ORDINALITY AS ' : ') AS ';
    sql += ident(fn.alias) + '(' + ident(fn.column) + (fn.ordinality ? ', ' + ident(fn.ordinality) : '') + ')';
  },
  join: (j) => {
    writeFrom(j.left);
    sql += JOIN_WORDS[j.type];
    if (j.right.kind === 'join') {
      sql += '(';
      writeFrom(j.right);
      sql += ')';
    } else {
      writeFrom(j.right);
    }
    if (j.using?.length) {
      sql += ' USING (';
      for (let k = 0; k < j.using.length; k++) sql += (k ? ', ' : '') + ident(j.using[k]);
      sql += ')';
    } else if (j.on) {
      sql += ' ON ';
      writeExpr(j.on);
    }
  },
};

const JOIN_WORDS: Readonly<Record<P.PgJoin['type'], string>> = {
  CROSS: '\n  CROSS JOIN ',
  INNER: '\n  JOIN ',
  LEFT: '\n  LEFT JOIN ',
  RIGHT: '\n  RIGHT JOIN ',
  FULL: '\n  FULL JOIN ',
};

function writeFrom(node: P.PgFrom): void {
  (FROM_WRITERS[node.kind] as (n: P.PgFrom) => void)(node);
}

function writeOrders(orders: readonly P.PgOrder[]): void {
  for (let k = 0; k < orders.length; k++) {
    const o = orders[k];
    if (k) sql += ', ';
    writeExpr(o.expr);
    sql += o.desc ? ' DESC' : ' ASC';
    if (o.nulls) sql += ' NULLS ' + o.nulls;
  }
}

function writeList(items: readonly P.PgExpr[], separator: string): void {
  for (let k = 0; k < items.length; k++) {
    if (k) sql += separator;
    writeExpr(items[k]);
  }
}

/**
 * One writer per expression kind. Leaves (column, literal, param) return their text, which
 * writeExpr appends and counts by its length; the others append their own text and count as 8.
 */
const EXPR_WRITERS: { [K in P.PgExprKind]: (node: Extract<P.PgExpr, { kind: K }>) => string | void } = {
  column: (c) => (c.table ? ident(c.table) + '.' + ident(c.name) : ident(c.name)),
  literal: (l) => printLiteral(l),
  param: (p) => '$' + p.index + '::text',
  op: (o) => {
    sql += '(';
    writeExpr(o.left);
    sql += ' ' + o.op + ' ';
    writeExpr(o.right);
    sql += ')';
  },
  not: (n) => {
    sql += '(NOT ';
    writeExpr(n.operand);
    sql += ')';
  },
  neg: (n) => {
    sql += '(- ';
    writeExpr(n.operand);
    sql += ')';
  },
  andOr: (a) => {
    sql += '(';
    writeList(a.operands, a.op === 'AND' ? ' AND ' : ' OR ');
    sql += ')';
  },
  is: (i) => {
    sql += '(';
    writeExpr(i.operand);
    sql += (i.negated ? ' IS NOT ' : ' IS ') + i.test + ')';
  },
  func: (fn) => {
    sql += fn.name + '(';
    if (fn.star) {
      sql += '*';
    } else {
      if (fn.distinct) sql += 'DISTINCT ';
      writeList(fn.args, ', ');
    }
    if (fn.orderBy?.length) {
      sql += ' ORDER BY ';
      writeOrders(fn.orderBy);
    }
    sql += ')';
    if (fn.withinGroup) {
      sql += ' WITHIN GROUP (ORDER BY ';
      writeOrders(fn.withinGroup);
      sql += ')';
    }
    if (fn.filter) {
      sql += ' FILTER (WHERE ';
      writeExpr(fn.filter);
      sql += ')';
    }
    if (fn.over) writeWindow(fn.over);
  },
  cast: (c) => {
    sql += '(';
    writeExpr(c.operand);
    sql += ')::' + c.type;
  },
  case: (c) => {
    sql += 'CASE';
    if (c.operand) {
      sql += ' ';
      writeExpr(c.operand);
    }
    for (const w of c.whens) {
      sql += ' WHEN ';
      writeExpr(w.when);
      sql += ' THEN ';
      writeExpr(w.then);
    }
    if (c.otherwise) {
      sql += ' ELSE ';
      writeExpr(c.otherwise);
    }
    sql += ' END';
  },
  in: (i) => {
    sql += '(';
    writeExpr(i.operand);
    sql += i.negated ? ' NOT IN (' : ' IN (';
    if (i.query) writeQuery(i.query);
    else writeList(i.list!, ', ');
    sql += '))';
  },
  between: (b) => {
    sql += '(';
    writeExpr(b.operand);
    sql += b.negated ? ' NOT BETWEEN ' : ' BETWEEN ';
    writeExpr(b.low);
    sql += ' AND ';
    writeExpr(b.high);
    sql += ')';
  },
  subquery: (s) => {
    sql += s.exists ? 'EXISTS (' : '(';
    writeQuery(s.query);
    sql += ')';
  },
  subscript: (s) => {
    sql += '(';
    writeExpr(s.base);
    sql += ')[';
    writeExpr(s.index);
    if (s.upper) {
      sql += ':';
      writeExpr(s.upper);
    }
    sql += ']';
  },
  any: (a) => {
    sql += a.negated ? '(NOT (' : '(';
    writeExpr(a.operand);
    sql += ' = ANY (';
    writeExpr(a.array);
    sql += a.negated ? ')))' : '))';
  },
  array: (a) => {
    sql += 'ARRAY[';
    writeList(a.items, ', ');
    sql += ']';
  },
  extract: (e) => {
    sql += 'extract(' + e.field + ' from ';
    writeExpr(e.operand);
    sql += ')';
  },
};

function writeWindow(w: P.PgWindow): void {
  sql += ' OVER (';
  if (w.partitionBy.length) {
    sql += 'PARTITION BY ';
    writeList(w.partitionBy, ', ');
  }
  if (w.orderBy.length) {
    sql += w.partitionBy.length ? ' ORDER BY ' : 'ORDER BY ';
    writeOrders(w.orderBy);
  }
  if (w.frame) {
    sql += ' ' + w.frame.unit + ' BETWEEN ';
    writeFrameBound(w.frame.start);
    sql += ' AND ';
    writeFrameBound(w.frame.end);
  }
  sql += ')';
}

function writeFrameBound(b: P.PgFrameBound): void {
  if (b.offset) {
    writeExpr(b.offset);
    sql += ' ';
  }
  sql += b.kind;
}

function writeExpr(node: P.PgExpr): void {
  const leaf = (EXPR_WRITERS[node.kind] as (n: P.PgExpr) => string | void)(node);
  if (leaf === undefined) {
    counted(8);
  } else {
    sql += leaf;
    counted(leaf.length);
  }
}

function printLiteral(l: P.PgLiteral): string {
  if (l.value === null) return 'NULL';
  if (typeof l.value === 'boolean') return l.value ? 'TRUE' : 'FALSE';
  if (typeof l.value === 'number') return l.numeric ?? String(l.value);
  // standard_conforming_strings is on (and cannot be changed by a query), so only quotes need doubling.
  return l.value.includes("'") ? `'${l.value.replace(/'/g, "''")}'` : `'${l.value}'`;
}

/** Quoted identifiers by name: queries repeat a few aliases and column names many times. */
const IDENTS = new Map<string, string>();

export function ident(name: string): string {
  let quoted = IDENTS.get(name);
  if (quoted === undefined) {
    quoted = name.includes('"') ? `"${name.replace(/"/g, '""')}"` : `"${name}"`;
    if (IDENTS.size < 4096 && name.length <= 256) IDENTS.set(name, quoted);
  }
  return quoted;
}
