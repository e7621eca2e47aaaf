/**
 * Recursive-descent parser for the SELECT subset of BigQuery SQL that endpoint queries use.
 *
 *   parseQuery('select a from t where b > 1')  →  Query { body: Select { … } }
 *
 * Every node keeps its source offset so later stages can point at the problem. Nesting is
 * bounded (MAX_SQL_NESTING) so hostile input ends in SqlLimitError, never a stack overflow; so
 * are the CTEs (MAX_SQL_CTES) and the SELECTs joined by UNION (MAX_SQL_UNION_SELECTS) of one
 * text, which the parser reads in a loop but later stages and Postgres see as chains.
 * Token handling (peek, accept, expect, errors) lives in cursor.ts, keyword lists in keywords.ts.
 */
import type * as E from './ast/expressions.js';
import type * as F from './ast/from.js';
import { make } from './ast/node.js';
import type * as Q from './ast/queries.js';
import { TokenCursor, describe } from './cursor.js';
import { MAX_SQL_CTES, MAX_SQL_NESTING, MAX_SQL_UNION_SELECTS } from '../inputLimits.js';
import { SqlLimitError } from './errors.js';
import { OTHER_STATEMENTS, RESERVED, UNSUPPORTED_CLAUSES } from './keywords.js';
import { tokenize, type Token } from './lexer.js';

const CAST_TYPES: Readonly<Record<string, E.CastType>> = {
  INT64: 'INT64',
  INT: 'INT64',
  INTEGER: 'INT64',
  BIGINT: 'INT64',
  SMALLINT: 'INT64',
  TINYINT: 'INT64',
  BYTEINT: 'INT64',
  FLOAT64: 'FLOAT64',
  NUMERIC: 'NUMERIC',
  DECIMAL: 'NUMERIC',
  BIGNUMERIC: 'NUMERIC',
  BIGDECIMAL: 'NUMERIC',
  BOOL: 'BOOL',
  BOOLEAN: 'BOOL',
  STRING: 'STRING',
  BYTES: 'BYTES',
  TIMESTAMP: 'TIMESTAMP',
  DATETIME: 'DATETIME',
  DATE: 'DATE',
  TIME: 'TIME',
};

/**
 * Type names after a Postgres-style `::` cast (the dashboard writes `event_message::text`), by
 * what they mean in BigQuery terms; BigQuery's own names are accepted too.
 */
const COLON_CAST_TYPES: Readonly<Record<string, E.CastType>> = {
  ...CAST_TYPES,
  TEXT: 'STRING',
  VARCHAR: 'STRING',
  CHAR: 'STRING',
  INT2: 'INT64',
  INT4: 'INT64',
  INT8: 'INT64',
  FLOAT: 'FLOAT64',
  FLOAT4: 'FLOAT64',
  FLOAT8: 'FLOAT64',
  REAL: 'FLOAT64',
  TIMESTAMPTZ: 'TIMESTAMP',
};

const COMPARISONS = new Set(['=', '!=', '<>', '<', '<=', '>', '>=']);
const NEGATABLE = new Set(['IN', 'LIKE', 'BETWEEN']);
const SELECT_LIST_END = new Set(['FROM', 'WHERE', 'GROUP', 'HAVING', 'ORDER', 'LIMIT', 'UNION', 'QUALIFY', 'WINDOW']);

/** Operators and words that one of the expression levels takes after an operand. */
const CONTINUING_OPS = new Set(['=', '!=', '<>', '<', '<=', '>', '>=', '+', '-', '*', '/', '||']);
const CONTINUING_WORDS = new Set(['OR', 'AND', 'IS', 'NOT', 'LIKE', 'BETWEEN', 'IN']);

function continuesExpression(t: Token): boolean {
  return t.kind === 'op' ? CONTINUING_OPS.has(t.text) : t.kind === 'word' && CONTINUING_WORDS.has(t.upper);
}

/** Function names as written, lower-cased once (most queries repeat a few names). */
const LOWER = new Map<string, string>();
function lowerCase(name: string): string {
  let lower = LOWER.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (LOWER.size < 1024) LOWER.set(name, lower);
  }
  return lower;
}

/** Parses one statement (a trailing `;` allowed). */
export function parseQuery(source: string): Q.Query {
  return new Parser(source).statement();
}

class Parser extends TokenCursor {
  /** CTEs defined so far, in every WITH clause of the text. */
  private ctesDefined = 0;
  /** SELECTs joined by UNION so far, over every UNION of the text. */
  private unionSelects = 0;

  constructor(source: string) {
    super(source, tokenize(source));
  }

  statement(): Q.Query {
    const first = this.peek();
    if (first.kind === 'word' && OTHER_STATEMENTS.has(first.upper)) {
      throw this.unsupported(`${first.upper} is not supported: only SELECT queries are allowed`, first);
    }
    const query = this.query();
    this.acceptOp(';');
    const next = this.peek();
    if (next.kind !== 'eof') {
      if (next.kind === 'word' && (next.upper === 'SELECT' || next.upper === 'WITH' || OTHER_STATEMENTS.has(next.upper))) {
        throw this.unsupported('only one statement is allowed', next);
      }
      throw this.syntax(`unexpected ${describe(next)}`, next);
    }
    return query;
  }

  // ── queries ────────────────────────────────────────────────────────────────

  private query(): Q.Query {
    const saved = this.depth;
    const first = this.peek();
    this.enter(first);
    const ctes = this.acceptWord('WITH') ? this.ctes() : [];
    let body = this.queryBody();
    let joined = false;
    for (;;) {
      const t = this.peek();
      if (!this.isWord(t, 'UNION')) break;
      // Both operands of the first UNION, then one more per UNION.
      this.unionSelects += joined ? 1 : 2;
      joined = true;
      if (this.unionSelects > MAX_SQL_UNION_SELECTS)
        throw new SqlLimitError(
          `more than ${MAX_SQL_UNION_SELECTS} SELECTs joined by UNION in one query (the limit on UNION operands)`,
          this.source,
          t.start,
        );
      this.i++;
      let op: Q.SetOperation['op'];
      if (this.acceptWord('ALL')) op = 'UNION ALL';
      else {
        // A bare UNION is UNION DISTINCT, as in standard SQL (BigQuery itself insists on the word).
        this.acceptWord('DISTINCT');
        op = 'UNION DISTINCT';
      }
      body = make<Q.SetOperation>({ kind: 'setOp', pos: t.start, op, left: body, right: this.queryBody() });
    }
    const orderBy = this.acceptWords('ORDER', 'BY') ? this.orderItems() : [];
    let limit: E.Expr | undefined;
    let offset: E.Expr | undefined;
    if (this.acceptWord('LIMIT')) {
      limit = this.expr();
      if (this.acceptWord('OFFSET')) offset = this.expr();
    }
    this.refuseClause();
    this.depth = saved;
    return make<Q.Query>({ kind: 'query', pos: first.start, ctes, body, orderBy, limit, offset });
  }

  private ctes(): Q.Cte[] {
    if (this.isWord(this.peek(), 'RECURSIVE')) throw this.unsupported('WITH RECURSIVE is not supported', this.peek());
    const ctes: Q.Cte[] = [];
    do {
      const nameToken = this.peek();
      if (++this.ctesDefined > MAX_SQL_CTES)
        throw new SqlLimitError(
          `more than ${MAX_SQL_CTES} CTEs in one query (the limit on CTEs): Postgres plans long chains of CTEs in time it cannot cancel`,
          this.source,
          nameToken.start,
        );
      const name = this.identifier('CTE name');
      this.expectWord('AS');
      this.expectOp('(');
      const query = this.query();
      this.expectOp(')');
      ctes.push(make<Q.Cte>({ kind: 'cte', pos: nameToken.start, name, query }));
    } while (this.acceptOp(','));
    return ctes;
  }

  private queryBody(): Q.QueryBody {
    if (this.isOp(this.peek(), '(')) {
      this.next();
      const q = this.query();
      this.expectOp(')');
      return q;
    }
    return this.select();
  }

  private select(): Q.Select {
    const start = this.expectWord('SELECT');
    if (this.isWord(this.peek(), 'AS')) throw this.unsupported('SELECT AS STRUCT / VALUE is not supported', this.peek());
    const distinct = this.acceptWord('DISTINCT');
    if (!distinct) this.acceptWord('ALL');
    const items: Q.SelectItem[] = [this.selectItem()];
    while (this.acceptOp(',')) {
      // BigQuery tolerates a trailing comma before FROM (and before the end of the select list).
      if (this.atSelectListEnd()) break;
      items.push(this.selectItem());
    }
    const from = this.acceptWord('FROM') ? this.fromClause() : undefined;
    const where = this.acceptWord('WHERE') ? this.expr() : undefined;
    const groupBy: E.Expr[] = [];
    if (this.acceptWords('GROUP', 'BY')) {
      const t = this.peek();
      if (this.isWord(t, 'ROLLUP') || this.isWord(t, 'CUBE') || this.isWord(t, 'GROUPING')) {
        throw this.unsupported(`GROUP BY ${t.upper} is not supported`, t);
      }
      do groupBy.push(this.expr());
      while (this.acceptOp(','));
    }
    const having = this.acceptWord('HAVING') ? this.expr() : undefined;
    const qualify = this.acceptWord('QUALIFY') ? this.expr() : undefined;
    this.refuseClause();
    return make<Q.Select>({ kind: 'select', pos: start.start, distinct, items, from, where, groupBy, having, qualify });
  }

  private atSelectListEnd(): boolean {
    const t = this.peek();
    return t.kind === 'eof' || this.isOp(t, ')') || this.isOp(t, ';') || (t.kind === 'word' && SELECT_LIST_END.has(t.upper));
  }

  private refuseClause(): void {
    const t = this.peek();
    if (t.kind === 'word' && UNSUPPORTED_CLAUSES[t.upper]) throw this.unsupported(`${UNSUPPORTED_CLAUSES[t.upper]} is not supported`, t);
  }

  private selectItem(): Q.SelectItem {
    const t = this.peek();
    if (this.isOp(t, '*')) {
      this.next();
      return make<Q.SelectStar>({ kind: 'selectStar', pos: t.start, except: this.starExcept() });
    }
    // `alias.*` / `a.b.*`
    if (t.kind === 'word' || t.kind === 'quoted') {
      let j = this.i;
      const parts: string[] = [];
      while ((this.tokens[j].kind === 'word' || this.tokens[j].kind === 'quoted') && this.isOp(this.tokens[j + 1], '.')) {
        parts.push(this.tokens[j].text);
        j += 2;
        if (this.isOp(this.tokens[j], '*')) {
          this.i = j + 1;
          return make<Q.SelectStar>({ kind: 'selectStar', pos: t.start, qualifier: parts, except: this.starExcept() });
        }
      }
    }
    const expr = this.expr();
    return make<Q.SelectExpr>({ kind: 'selectExpr', pos: t.start, expr, alias: this.alias() });
  }

  private starExcept(): string[] {
    if (this.isWord(this.peek(), 'REPLACE')) throw this.unsupported('SELECT * REPLACE is not supported', this.peek());
    if (!this.acceptWord('EXCEPT')) return [];
    this.expectOp('(');
    const names: string[] = [];
    do names.push(this.identifier('column name'));
    while (this.acceptOp(','));
    this.expectOp(')');
    return names;
  }

  /** `AS name`, or an implicit alias (a non-reserved word or a quoted identifier). */
  private alias(): string | undefined {
    if (this.acceptWord('AS')) return this.identifier('alias');
    const t = this.peek();
    if (t.kind === 'quoted' || (t.kind === 'word' && !RESERVED.has(t.upper) && !UNSUPPORTED_CLAUSES[t.upper] && t.upper !== 'OFFSET')) {
      this.next();
      return t.text;
    }
    return undefined;
  }

  private orderItems(): Q.OrderItem[] {
    const items: Q.OrderItem[] = [];
    do {
      const pos = this.peek().start;
      const expr = this.expr();
      const desc = this.acceptWord('DESC') ? true : (this.acceptWord('ASC'), false);
      let nulls: Q.OrderItem['nulls'];
      if (this.acceptWord('NULLS')) {
        if (this.acceptWord('FIRST')) nulls = 'FIRST';
        else {
          this.expectWord('LAST');
          nulls = 'LAST';
        }
      }
      items.push(make<Q.OrderItem>({ kind: 'orderItem', pos, expr, desc, nulls }));
    } while (this.acceptOp(','));
    return items;
  }

  // ── FROM ───────────────────────────────────────────────────────────────────

  private fromClause(): F.FromItem {
    let left = this.fromItem();
    for (;;) {
      const t = this.peek();
      let type: F.JoinType | undefined;
      if (this.acceptOp(',')) type = 'COMMA';
      else if (this.acceptWords('CROSS', 'JOIN')) type = 'CROSS';
      else if (this.acceptWord('JOIN') || this.acceptWords('INNER', 'JOIN')) type = 'INNER';
      else if (this.acceptWords('LEFT', 'JOIN') || this.acceptThreeWords('LEFT', 'OUTER', 'JOIN')) type = 'LEFT';
      else if (this.acceptWords('RIGHT', 'JOIN') || this.acceptThreeWords('RIGHT', 'OUTER', 'JOIN')) type = 'RIGHT';
      else if (this.acceptWords('FULL', 'JOIN') || this.acceptThreeWords('FULL', 'OUTER', 'JOIN')) type = 'FULL';
      else if (t.kind === 'word' && t.upper === 'NATURAL') throw this.unsupported(`${t.upper} JOIN is not supported`, t);
      if (!type) return left;
      const right = this.fromItem();
      let on: E.Expr | undefined;
      let using: string[] = [];
      if (type !== 'COMMA' && type !== 'CROSS') {
        if (this.acceptWord('ON')) on = this.expr();
        else if (this.acceptWord('USING')) {
          this.expectOp('(');
          using = [];
          do using.push(this.identifier('column name'));
          while (this.acceptOp(','));
          this.expectOp(')');
        } else if (right.kind !== 'unnest' || type === 'RIGHT' || type === 'FULL')
          throw this.syntax(`expected ON or USING after ${type} JOIN`, this.peek());
      }
      left = make<F.Join>({ kind: 'join', pos: t.start, type, left, right, on, using });
    }
  }

  private fromItem(): F.FromItem {
    const t = this.peek();
    let item: F.FromItem;
    if (this.isWord(t, 'UNNEST')) {
      this.next();
      this.expectOp('(');
      const expr = this.expr();
      this.expectOp(')');
      const alias = this.alias();
      // `WITH OFFSET [AS] [name]`: the element's 0-based position, named `offset` by default.
      const offset =
        this.isWord(this.peek(), 'WITH') && this.isWord(this.peekAt(1), 'OFFSET') ? ((this.i += 2), this.alias() ?? 'offset') : undefined;
      item = make<F.UnnestRef>({ kind: 'unnest', pos: t.start, expr, alias, offset });
    } else if (this.isOp(t, '(')) {
      this.next();
      if (!this.isWord(this.peek(), 'SELECT') && !this.isWord(this.peek(), 'WITH') && !this.isOp(this.peek(), '(')) {
        // A parenthesised join: `(a join b on …)`; it takes no alias.
        const saved = this.depth;
        this.enter(this.peek());
        const inner = this.fromClause();
        this.depth = saved;
        this.expectOp(')');
        return inner;
      }
      const saved = this.depth;
      this.enter(this.peek());
      const query = this.query();
      this.depth = saved;
      this.expectOp(')');
      item = make<F.DerivedRef>({ kind: 'derived', pos: t.start, query, alias: this.alias() });
    } else {
      const name = this.tableName();
      if (this.isWord(this.peek(), 'FOR')) throw this.unsupported('FOR SYSTEM_TIME AS OF is not supported', this.peek());
      item = make<F.TableRef>({ kind: 'table', pos: t.start, name, alias: this.alias() });
    }
    this.refuseClause();
    return item;
  }

  /** `a.b.c`, `` `a.b.c` `` or a mix; the parts are joined with dots into the name queries use. */
  private tableName(): string {
    const parts = [this.identifier('table name')];
    while (this.isOp(this.peek(), '.')) {
      this.next();
      parts.push(this.identifier('table name', true));
    }
    return parts.join('.');
  }

  // ── expressions (precedence climbing, lowest first) ───────────────────────

  // The hot path passes operand parsers as method references (`this.and`) rather than arrow
  // functions, so parsing an expression allocates no closures.

  expr(): E.Expr {
    const saved = this.depth;
    const t = this.peek();
    this.enter(t);
    let e: E.Expr;
    if (t.kind === 'word' && t.upper === 'NOT') {
      e = this.or();
    } else {
      // perf: or → and → not → comparison → additive → multiplicative → unary, without the
      // descent: the operand first, then each level's operators from the innermost out. The same
      // steps in the same order; an operand with no operator after it (most of them: a name, a
      // literal or a call before `,`, `)`, AS, THEN …) skips the levels altogether.
      e = this.unary();
      if (continuesExpression(this.peek()))
        e = this.orRest(this.andRest(this.comparisonRest(this.additiveRest(this.multiplicativeRest(e)))));
    }
    this.depth = saved;
    return e;
  }

  private or(): E.Expr {
    return this.orRest(this.and());
  }

  /** `first OR …`, `first` already parsed. */
  private orRest(first: E.Expr): E.Expr {
    if (!this.isWord(this.peek(), 'OR')) return first;
    const operands = [first];
    while (this.acceptWord('OR')) operands.push(this.and());
    return make<E.Logical>({ kind: 'logical', pos: first.pos, op: 'OR', operands });
  }

  private and(): E.Expr {
    return this.andRest(this.not());
  }

  private andRest(first: E.Expr): E.Expr {
    if (!this.isWord(this.peek(), 'AND')) return first;
    const operands = [first];
    while (this.acceptWord('AND')) operands.push(this.not());
    return make<E.Logical>({ kind: 'logical', pos: first.pos, op: 'AND', operands });
  }

  private not(): E.Expr {
    const t = this.peek();
    if (this.isWord(t, 'NOT')) {
      this.i++;
      const saved = this.depth;
      this.enter(this.peek());
      const e = make<E.Unary>({ kind: 'unary', pos: t.start, op: 'NOT', operand: this.not() });
      this.depth = saved;
      return e;
    }
    return this.comparison();
  }

  private comparison(): E.Expr {
    return this.comparisonRest(this.additive());
  }

  private comparisonRest(left: E.Expr): E.Expr {
    const t = this.peek();
    if (t.kind === 'op') {
      // Any other operator: none of the word forms below can follow.
      if (!COMPARISONS.has(t.text)) return left;
      this.i++;
      const op = (t.text === '<>' ? '!=' : t.text) as E.BinaryOp;
      return make<E.Binary>({ kind: 'binary', pos: left.pos, op, left, right: this.additive() });
    }
    if (t.kind !== 'word') return left;
    if (this.acceptWord('IS')) {
      const negated = this.acceptWord('NOT');
      const v = this.next();
      const test = v.kind === 'word' && ['NULL', 'TRUE', 'FALSE'].includes(v.upper) ? (v.upper as E.IsTest['test']) : undefined;
      if (!test) throw this.syntax('expected NULL, TRUE or FALSE after IS', v);
      return make<E.IsTest>({ kind: 'is', pos: left.pos, operand: left, test, negated });
    }
    const negated = this.isWord(t, 'NOT') && NEGATABLE.has(this.peekAt(1).upper);
    if (negated) this.i++;
    if (this.acceptWord('LIKE')) {
      return make<E.Like>({ kind: 'like', pos: left.pos, operand: left, pattern: this.additive(), negated });
    }
    if (this.acceptWord('BETWEEN')) {
      const low = this.additive();
      this.expectWord('AND');
      return make<E.Between>({ kind: 'between', pos: left.pos, operand: left, low, high: this.additive(), negated });
    }
    if (this.acceptWord('IN')) {
      if (this.acceptWord('UNNEST')) {
        this.expectOp('(');
        const array = this.expr();
        this.expectOp(')');
        return make<E.InUnnest>({ kind: 'inUnnest', pos: left.pos, operand: left, array, negated });
      }
      this.expectOp('(');
      if (this.isWord(this.peek(), 'SELECT') || this.isWord(this.peek(), 'WITH')) {
        const query = this.query();
        this.expectOp(')');
        return make<E.InQuery>({ kind: 'inQuery', pos: left.pos, operand: left, query, negated });
      }
      const list: E.Expr[] = [];
      do list.push(this.expr());
      while (this.acceptOp(','));
      this.expectOp(')');
      return make<E.InList>({ kind: 'inList', pos: left.pos, operand: left, list, negated });
    }
    return left;
  }

  // Left-associative operators; each link counts towards the depth limit, as later stages recurse through it.

  private additive(): E.Expr {
    return this.additiveRest(this.multiplicative());
  }

  private additiveRest(left: E.Expr): E.Expr {
    const saved = this.depth;
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'op' || (t.text !== '+' && t.text !== '-')) break;
      this.i++;
      this.enter(t);
      left = make<E.Binary>({ kind: 'binary', pos: left.pos, op: t.text, left, right: this.multiplicative() });
    }
    this.depth = saved;
    return left;
  }

  private multiplicative(): E.Expr {
    return this.multiplicativeRest(this.unary());
  }

  private multiplicativeRest(left: E.Expr): E.Expr {
    const saved = this.depth;
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'op' || (t.text !== '*' && t.text !== '/' && t.text !== '||')) break;
      this.i++;
      this.enter(t);
      left = make<E.Binary>({ kind: 'binary', pos: left.pos, op: t.text, left, right: this.unary() });
    }
    this.depth = saved;
    return left;
  }

  private unary(): E.Expr {
    const t = this.peek();
    if (t.kind === 'op') {
      if (t.text === '-' || t.text === '+') {
        this.i++;
        const saved = this.depth;
        this.enter(this.peek());
        const e = make<E.Unary>({ kind: 'unary', pos: t.start, op: t.text, operand: this.unary() });
        this.depth = saved;
        return e;
      }
      if (t.text === '~' || t.text === '|' || t.text === '&' || t.text === '^') {
        throw this.unsupported('bitwise operators are not supported', t);
      }
    }
    return this.postfix(this.primary());
  }

  /** `.field` and `[…]` after a primary. */
  private postfix(base: E.Expr): E.Expr {
    let depth = 0;
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'op') return base;
      if (t.text === '.') {
        this.i++;
        const name = this.identifier('field name', true);
        base =
          base.kind === 'path'
            ? make<E.Path>({ kind: 'path', pos: base.pos, parts: [...base.parts, name] })
            : make<E.FieldAccess>({ kind: 'field', pos: base.pos, base, name });
      } else if (t.text === '[') {
        this.i++;
        base = this.subscript(base);
      } else if (t.text === '::') {
        this.i++;
        base = make<E.Cast>({ kind: 'cast', pos: base.pos, operand: base, type: this.colonCastType(), safe: false });
      } else {
        return base;
      }
      if (++depth > MAX_SQL_NESTING)
        throw new SqlLimitError(`expression nested deeper than ${MAX_SQL_NESTING} levels`, this.source, t.start);
    }
  }

  /** The type after `::`: one word, or `double precision`, `timestamp with time zone`. */
  private colonCastType(): E.CastType {
    const t = this.next();
    const word = t.kind === 'word' ? t.upper : '';
    if (word === 'DOUBLE' && this.acceptWord('PRECISION')) return 'FLOAT64';
    if (word === 'TIMESTAMP' && this.acceptWord('WITH')) {
      this.expectWord('TIME');
      this.expectWord('ZONE');
      return 'TIMESTAMP';
    }
    const type = COLON_CAST_TYPES[word];
    if (!type) throw this.unsupported(`cast to ${t.text || 'nothing'} is not supported`, t);
    return type;
  }

  private subscript(base: E.Expr): E.Subscript {
    const t = this.peek();
    const modes = ['OFFSET', 'SAFE_OFFSET', 'ORDINAL', 'SAFE_ORDINAL'];
    let mode: E.SubscriptMode = 'OFFSET';
    let index: E.Expr;
    if (t.kind === 'word' && modes.includes(t.upper) && this.isOp(this.peekAt(1), '(')) {
      this.next();
      this.next();
      mode = t.upper as E.SubscriptMode;
      index = this.expr();
      this.expectOp(')');
    } else {
      index = this.expr();
    }
    this.expectOp(']');
    return make<E.Subscript>({ kind: 'subscript', pos: base.pos, base, index, mode });
  }

  private primary(): E.Expr {
    const t = this.peek();
    switch (t.kind) {
      case 'number':
        this.next();
        return make<E.Literal>({ kind: 'literal', pos: t.start, type: /^0x|^[0-9]+$/i.test(t.text) ? 'INT64' : 'FLOAT64', value: t.text });
      case 'string':
        this.next();
        return make<E.Literal>({ kind: 'literal', pos: t.start, type: 'STRING', value: t.text });
      case 'bytes': {
        // `b'…'`: the same BYTES as FROM_HEX of its bytes in hex (the lexer has decoded the escapes).
        this.next();
        const hex = make<E.Literal>({ kind: 'literal', pos: t.start, type: 'STRING', value: t.text });
        return make<E.Call>({ kind: 'call', pos: t.start, name: 'from_hex', args: [hex], distinct: false, star: false, orderBy: [] });
      }
      case 'param':
        this.next();
        return make<E.Param>({ kind: 'param', pos: t.start, name: t.text });
      case 'quoted':
        // `` `some.function`(x) ``: a function named with backticks; the function table judges the name.
        if (this.isOp(this.peekAt(1), '(')) return this.call();
        this.next();
        return make<E.Path>({ kind: 'path', pos: t.start, parts: [t.text] });
      case 'op':
        if (t.text === '(') return this.parenthesised();
        if (t.text === '[') return this.arrayLiteral(t);
        throw this.syntax(`unexpected ${describe(t)}`, t);
      case 'eof':
        throw this.syntax('unexpected end of query', t);
      case 'word':
        return this.wordPrimary(t);
    }
  }

  private parenthesised(): E.Expr {
    const open = this.next();
    if (this.isWord(this.peek(), 'SELECT') || this.isWord(this.peek(), 'WITH')) {
      const query = this.query();
      this.expectOp(')');
      return make<E.ScalarSubquery>({ kind: 'subquery', pos: open.start, query });
    }
    const inner = this.expr();
    if (this.isOp(this.peek(), ',')) {
      // A tuple `(a, b)`: a STRUCT without field names.
      const fields: E.StructField[] = [{ expr: inner }];
      while (this.acceptOp(',')) fields.push({ expr: this.expr() });
      this.expectOp(')');
      return make<E.Struct>({ kind: 'struct', pos: open.start, fields });
    }
    this.expectOp(')');
    return inner;
  }

  private wordPrimary(t: Token): E.Expr {
    const u = t.upper;
    const followedByParen = this.isOp(this.peekAt(1), '(');
    switch (u) {
      case 'NULL':
        this.next();
        return make<E.Literal>({ kind: 'literal', pos: t.start, type: 'NULL', value: null });
      case 'TRUE':
      case 'FALSE':
        this.next();
        return make<E.Literal>({ kind: 'literal', pos: t.start, type: 'BOOL', value: u === 'TRUE' });
      case 'CASE':
        return this.caseExpr();
      case 'CAST':
      case 'SAFE_CAST':
        return this.cast(u === 'SAFE_CAST');
      case 'EXTRACT':
        return this.extract();
      case 'INTERVAL':
        return this.interval();
      case 'EXISTS': {
        this.next();
        this.expectOp('(');
        const query = this.query();
        this.expectOp(')');
        return make<E.Exists>({ kind: 'exists', pos: t.start, query });
      }
      case 'CURRENT_TIMESTAMP':
      case 'CURRENT_DATE':
      case 'CURRENT_DATETIME':
      case 'CURRENT_TIME':
        if (!followedByParen) {
          this.next();
          return make<E.Call>({
            kind: 'call',
            pos: t.start,
            name: t.text.toLowerCase(),
            args: [],
            distinct: false,
            star: false,
            orderBy: [],
          });
        }
        break;
      case 'TIMESTAMP':
      case 'DATE':
      case 'DATETIME':
      case 'TIME':
        if (this.peekAt(1).kind === 'string') {
          this.next();
          const value = this.next();
          const operand = make<E.Literal>({ kind: 'literal', pos: value.start, type: 'STRING', value: value.text });
          return make<E.Cast>({ kind: 'cast', pos: t.start, operand, type: u, safe: false });
        }
        break;
      case 'JSON':
        // `JSON '{"a": 1}'`: BigQuery checks the text while compiling; it is PARSE_JSON of it.
        if (this.peekAt(1).kind === 'string') {
          this.next();
          const value = this.next();
          try {
            JSON.parse(value.text);
          } catch {
            throw this.syntax('invalid JSON literal', value);
          }
          const operand = make<E.Literal>({ kind: 'literal', pos: value.start, type: 'STRING', value: value.text });
          return make<E.Call>({
            kind: 'call',
            pos: t.start,
            name: 'parse_json',
            args: [operand],
            distinct: false,
            star: false,
            orderBy: [],
          });
        }
        break;
      case 'RANGE':
        // `RANGE<DATE> '[2020-01-01, 2020-12-31)'`: a CAST of the text, which the translator reads while translating.
        if (this.isOp(this.peekAt(1), '<')) {
          this.next();
          const type = this.rangeType();
          const value = this.peek();
          if (value.kind !== 'string') throw this.syntax(`expected a string literal after ${type} but found ${describe(value)}`, value);
          this.next();
          const operand = make<E.Literal>({ kind: 'literal', pos: value.start, type: 'STRING', value: value.text });
          return make<E.Cast>({ kind: 'cast', pos: t.start, operand, type, safe: false });
        }
        break;
      case 'ARRAY':
        return this.arrayConstructor(t);
      case 'STRUCT':
        return this.struct(t);
    }
    if (followedByParen && (!RESERVED.has(u) || u === 'IF' || u === 'LEFT' || u === 'RIGHT' || u === 'RANGE')) return this.call();
    if (this.isDottedCall()) return this.dottedCall();
    this.next();
    if (RESERVED.has(u)) throw this.syntax(`unexpected keyword ${u}`, t);
    return make<E.Path>({ kind: 'path', pos: t.start, parts: [t.text] });
  }

  /** `net.host(`, `safe.substr(`, `safe.net.host(`: words joined by dots, then an opening parenthesis. */
  private isDottedCall(): boolean {
    let k = 0;
    while (this.peekAt(k).kind === 'word' && this.isOp(this.peekAt(k + 1), '.')) k += 2;
    return k > 0 && this.peekAt(k).kind === 'word' && this.isOp(this.peekAt(k + 1), '(');
  }

  /** A dotted function name (`NET.HOST`), with BigQuery's `SAFE.` prefix taken off into `safe`. */
  private dottedCall(): E.Call {
    const first = this.peek();
    const parts: string[] = [];
    do parts.push(lowerCase(this.next().text));
    while (this.acceptOp('.'));
    const safe = parts[0] === 'safe' && parts.length > 1;
    return this.call(first, (safe ? parts.slice(1) : parts).join('.'), safe);
  }

  private call(nameToken: Token = this.next(), name = lowerCase(nameToken.text), safe = false): E.Call {
    this.expectOp('(');
    const saved = this.depth;
    this.enter(this.peek());
    const args: E.Expr[] = [];
    let star = false;
    const distinct = this.acceptWord('DISTINCT');
    const orderBy: E.CallOrder[] = [];
    const argNames: (string | undefined)[] = [];
    let limit: E.Expr | undefined;
    let nulls: E.Call['nulls'];
    if (this.isOp(this.peek(), '*') && this.isOp(this.peekAt(1), ')')) {
      this.i++;
      star = true;
    } else if (!this.isOp(this.peek(), ')')) {
      do {
        if ((this.peek().kind === 'word' || this.peek().kind === 'quoted') && this.isOp(this.peekAt(1), '=>')) {
          argNames[args.length] = lowerCase(this.next().text);
          this.next();
        }
        args.push(this.expr());
      } while (this.acceptOp(','));
      if (this.isWord(this.peek(), 'IGNORE') || this.isWord(this.peek(), 'RESPECT')) {
        nulls = this.next().upper as E.Call['nulls'];
        this.expectWord('NULLS');
      }
      if (this.acceptWords('ORDER', 'BY')) {
        do {
          const expr = this.expr();
          const desc = this.acceptWord('DESC') ? true : (this.acceptWord('ASC'), false);
          orderBy.push({ expr, desc });
        } while (this.acceptOp(','));
      }
      if (this.acceptWord('LIMIT')) limit = this.expr();
    }
    this.expectOp(')');
    const over = this.isWord(this.peek(), 'OVER') ? this.window() : undefined;
    this.depth = saved;
    const named = argNames.length ? { argNames: args.map((_, k) => argNames[k]) } : {};
    return make<E.Call>({
      kind: 'call',
      pos: nameToken.start,
      name,
      args,
      distinct,
      star,
      orderBy,
      limit,
      over,
      nulls,
      ...(safe ? { safe } : {}),
      ...named,
    });
  }

  /** `OVER (PARTITION BY … ORDER BY … [ROWS | RANGE frame])`; named windows are refused with the WINDOW clause. */
  private window(): E.WindowSpec {
    const over = this.next();
    if (!this.isOp(this.peek(), '(')) throw this.unsupported('named windows (OVER name) are not supported', this.peek());
    this.next();
    const partitionBy: E.Expr[] = [];
    if (this.acceptWords('PARTITION', 'BY')) {
      do partitionBy.push(this.expr());
      while (this.acceptOp(','));
    }
    const orderBy: E.WindowOrder[] = [];
    if (this.acceptWords('ORDER', 'BY')) {
      for (const o of this.orderItems()) orderBy.push({ expr: o.expr, desc: o.desc, nulls: o.nulls });
    }
    let frame: E.WindowSpec['frame'];
    const unitToken = this.peek();
    if (this.isWord(unitToken, 'ROWS') || this.isWord(unitToken, 'RANGE')) {
      this.next();
      const unit = unitToken.upper as 'ROWS' | 'RANGE';
      if (this.acceptWord('BETWEEN')) {
        const start = this.frameBound();
        this.expectWord('AND');
        frame = { unit, start, end: this.frameBound() };
      } else {
        frame = { unit, start: this.frameBound() };
      }
    }
    this.expectOp(')');
    return { pos: over.start, partitionBy, orderBy, frame };
  }

  private frameBound(): E.FrameBound {
    const t = this.peek();
    if (this.acceptWord('UNBOUNDED')) {
      if (this.acceptWord('PRECEDING')) return { kind: 'UNBOUNDED PRECEDING', pos: t.start };
      this.expectWord('FOLLOWING');
      return { kind: 'UNBOUNDED FOLLOWING', pos: t.start };
    }
    if (this.acceptWords('CURRENT', 'ROW')) return { kind: 'CURRENT ROW', pos: t.start };
    const offset = this.additive();
    if (this.acceptWord('PRECEDING')) return { kind: 'PRECEDING', offset, pos: t.start };
    this.expectWord('FOLLOWING');
    return { kind: 'FOLLOWING', offset, pos: t.start };
  }

  /** `STRUCT(a, b AS y)` or `STRUCT<x INT64, y STRING>(…)`. */
  private struct(t: Token): E.Struct {
    this.next();
    const types = this.isOp(this.peek(), '<') ? this.structTypeFields() : undefined;
    this.expectOp('(');
    const saved = this.depth;
    this.enter(this.peek());
    const fields: E.StructField[] = [];
    if (!this.isOp(this.peek(), ')')) {
      do {
        const expr = this.expr();
        fields.push({ expr, name: this.acceptWord('AS') ? this.identifier('field name') : undefined });
      } while (this.acceptOp(','));
    }
    this.expectOp(')');
    this.depth = saved;
    if (types && types.length !== fields.length)
      throw this.syntax(`STRUCT declares ${types.length} fields but has ${fields.length} values`, t);
    return make<E.Struct>({ kind: 'struct', pos: t.start, fields, types });
  }

  /** `ARRAY[…]`, `ARRAY<T>[…]` or `ARRAY(SELECT …)`. */
  private arrayConstructor(t: Token): E.Expr {
    this.next();
    let element: E.TypeSpec | undefined;
    if (this.isOp(this.peek(), '<')) {
      this.next();
      element = this.typeSpec();
      this.expectClosingAngle();
    }
    if (!element && this.isOp(this.peek(), '(')) {
      this.next();
      const query = this.query();
      this.expectOp(')');
      return make<E.ArraySubquery>({ kind: 'arraySubquery', pos: t.start, query });
    }
    if (!this.isOp(this.peek(), '[')) throw this.syntax(`expected "[" or "(" after ARRAY but found ${describe(this.peek())}`, this.peek());
    return this.arrayLiteral(this.peek(), element, t.start);
  }

  private arrayLiteral(open: Token, element?: E.TypeSpec, pos = open.start): E.ArrayLiteral {
    this.expectOp('[');
    const saved = this.depth;
    this.enter(this.peek());
    const items: E.Expr[] = [];
    if (!this.isOp(this.peek(), ']')) {
      do items.push(this.expr());
      while (this.acceptOp(','));
    }
    this.expectOp(']');
    this.depth = saved;
    return make<E.ArrayLiteral>({ kind: 'arrayLiteral', pos, items, element });
  }

  /** `<name TYPE, …>` after STRUCT; the `<` is the current token. */
  private structTypeFields(): { name?: string; type: E.TypeSpec }[] {
    this.expectOp('<');
    const saved = this.depth;
    this.enter(this.peek());
    const fields: { name?: string; type: E.TypeSpec }[] = [];
    do {
      const t = this.peek();
      const named = (t.kind === 'word' || t.kind === 'quoted') && (this.peekAt(1).kind === 'word' || this.peekAt(1).kind === 'quoted');
      const name = named ? this.identifier('field name', true) : undefined;
      fields.push({ name, type: this.typeSpec() });
    } while (this.acceptOp(','));
    this.expectClosingAngle();
    this.depth = saved;
    return fields;
  }

  private typeSpec(): E.TypeSpec {
    const t = this.next();
    if (this.isWord(t, 'STRUCT')) return { kind: 'struct', fields: this.structTypeFields() };
    if (this.isWord(t, 'ARRAY')) {
      this.expectOp('<');
      const element = this.typeSpec();
      this.expectClosingAngle();
      return { kind: 'array', element };
    }
    if (this.isWord(t, 'RANGE')) return { kind: 'scalar', name: this.rangeType() };
    const name = t.kind === 'word' ? CAST_TYPES[t.upper] : undefined;
    if (!name) throw this.unsupported(`type ${t.text || 'nothing'} is not supported`, t);
    return { kind: 'scalar', name };
  }

  /** `<DATE>`, `<DATETIME>` or `<TIMESTAMP>` after RANGE (the `<` is the current token): BigQuery's three RANGE types. */
  private rangeType(): E.CastType {
    this.expectOp('<');
    const element = this.next();
    const name = element.kind === 'word' ? element.upper : '';
    if (name !== 'DATE' && name !== 'DATETIME' && name !== 'TIMESTAMP')
      throw this.syntax(`RANGE takes DATE, DATETIME or TIMESTAMP, not ${element.text || 'nothing'}`, element);
    this.expectClosingAngle();
    return `RANGE<${name}>`;
  }

  /** `>`, or half of a `>>` that closes two type parameter lists at once. */
  private expectClosingAngle(): void {
    const t = this.peek();
    if (this.isOp(t, '>>')) {
      (this.tokens as Token[])[this.i] = { ...t, text: '>', start: t.start + 1 };
      return;
    }
    this.expectOp('>');
  }

  private caseExpr(): E.Case {
    const start = this.next();
    const saved = this.depth;
    this.enter(this.peek());
    const operand = this.isWord(this.peek(), 'WHEN') ? undefined : this.expr();
    const whens: E.When[] = [];
    while (this.acceptWord('WHEN')) {
      const when = this.expr();
      this.expectWord('THEN');
      whens.push({ when, then: this.expr() });
    }
    if (whens.length === 0) throw this.syntax('expected WHEN in CASE', this.peek());
    const otherwise = this.acceptWord('ELSE') ? this.expr() : undefined;
    this.expectWord('END');
    this.depth = saved;
    return make<E.Case>({ kind: 'case', pos: start.start, operand, whens, otherwise });
  }

  private cast(safe: boolean): E.Cast {
    const start = this.next();
    this.expectOp('(');
    const operand = this.expr();
    this.expectWord('AS');
    const typeToken = this.next();
    const type = this.isWord(typeToken, 'RANGE') ? this.rangeType() : typeToken.kind === 'word' ? CAST_TYPES[typeToken.upper] : undefined;
    if (!type) throw this.unsupported(`CAST to ${typeToken.text || 'nothing'} is not supported`, typeToken);
    this.expectOp(')');
    return make<E.Cast>({ kind: 'cast', pos: start.start, operand, type, safe });
  }

  private extract(): E.Extract {
    const start = this.next();
    this.expectOp('(');
    let part = this.identifier('date part', true).toUpperCase();
    // WEEK(<WEEKDAY>): weeks starting on that day.
    if (part === 'WEEK' && this.acceptOp('(')) {
      part = `WEEK(${this.identifier('weekday', true).toUpperCase()})`;
      this.expectOp(')');
    }
    this.expectWord('FROM');
    const operand = this.expr();
    let zone: E.Expr | undefined;
    if (this.acceptWord('AT')) {
      this.expectWord('TIME');
      this.expectWord('ZONE');
      zone = this.expr();
    }
    this.expectOp(')');
    return make<E.Extract>({ kind: 'extract', pos: start.start, part, operand, zone });
  }

  private interval(): E.Interval {
    const start = this.next();
    const value = this.additive();
    const unit = this.identifier('interval unit', true).toUpperCase();
    if (this.acceptWord('TO')) {
      const toUnit = this.identifier('interval unit', true).toUpperCase();
      return make<E.Interval>({ kind: 'interval', pos: start.start, value, unit, toUnit });
    }
    return make<E.Interval>({ kind: 'interval', pos: start.start, value, unit });
  }
}
