/**
 * Wall 2: the printed SQL parsed by Postgres' own parser (libpg-query) and checked against an
 * allowlist, independently of how it was produced. Exactly one SELECT; no INTO or locking; every
 * relation a CTE in scope or a table of schema `logs`; every function, operator, type and node
 * kind one the printer emits.
 *
 *   validatePostgres('SELECT pg_sleep(10)')  →  throws SqlSandboxError
 */
import { loadModule, parseSync } from 'libpg-query';
import { LOG_SCHEMA } from './catalog.js';
import { SqlSandboxError } from './errors.js';
import { isSetReturning, isWindowOnly, pgFunction } from './postgres/functions.js';

/** FRAMEOPTION_EXCLUDE_CURRENT_ROW | _GROUP | _TIES (nodes/parsenodes.h): the printer never writes EXCLUDE. */
const FRAME_EXCLUSIONS = 0x8000 | 0x10000 | 0x20000;

const OPERATORS = new Set([
  '=',
  '<>',
  '<',
  '<=',
  '>',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '||',
  '~',
  '~*',
  '->',
  '->>',
  '#>',
  '#>>',
  // `"timestamp" <@ tstzrange(…)`: the search hours (postgres/searchHours.ts).
  '<@',
  // `fn(x) @> ARRAY[…]`: a needle's rare trigrams (postgres/search.ts).
  '@>',
  '~~',
  '!~~',
  '~~*',
  '!~~*',
  'BETWEEN',
  'NOT BETWEEN',
]);
const OPERATOR_KINDS = new Set([
  'AEXPR_OP',
  'AEXPR_OP_ANY',
  'AEXPR_IN',
  'AEXPR_LIKE',
  'AEXPR_ILIKE',
  'AEXPR_BETWEEN',
  'AEXPR_NOT_BETWEEN',
  'AEXPR_NULLIF',
]);

/** Fields holding a node without the `{ Kind: … }` wrapper, and the kind they hold. */
const UNWRAPPED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  SelectStmt: { larg: 'SelectStmt', rarg: 'SelectStmt', intoClause: 'IntoClause' },
  TypeCast: { typeName: 'TypeName' },
  RangeVar: { alias: 'Alias' },
  RangeSubselect: { alias: 'Alias' },
  RangeFunction: { alias: 'Alias' },
  JoinExpr: { alias: 'Alias', join_using_alias: 'Alias' },
  FuncCall: { over: 'WindowDef' },
};

/** Type names as the Postgres parser reports them (`bigint` → int8, `boolean` → bool, …). */
const TYPES = new Set([
  'text',
  'bytea',
  'int4',
  'int8',
  'float8',
  'numeric',
  'bool',
  'timestamptz',
  'timestamp',
  'date',
  'time',
  'interval',
  'jsonb',
  // RANGE<DATE>, RANGE<DATETIME>, RANGE<TIMESTAMP> (src/sql/library/ranges.ts): typed NULLs and values read back from JSON.
  'daterange',
  'tsrange',
  'tstzrange',
]);

/** Parse-tree node kinds that a translated query may contain; anything else is refused. */
const NODES = new Set([
  'SelectStmt',
  'ResTarget',
  'ColumnRef',
  'A_Const',
  'ParamRef',
  'A_Expr',
  'BoolExpr',
  'NullTest',
  'BooleanTest',
  'FuncCall',
  'TypeCast',
  'TypeName',
  'CaseExpr',
  'CaseWhen',
  'CoalesceExpr',
  'MinMaxExpr',
  'SubLink',
  'RangeVar',
  'RangeSubselect',
  'RangeFunction',
  'JoinExpr',
  'Alias',
  'WithClause',
  'CommonTableExpr',
  'SortBy',
  'A_Indirection',
  'A_Indices',
  'A_ArrayExpr',
  'String',
  'Integer',
  'Float',
  'Boolean',
  'List',
  'A_Star',
  'WindowDef',
]);

let loaded: Promise<void> | undefined;
let ready = false;

/** Loads the WASM parser once. */
export function loadValidator(): Promise<void> {
  loaded ??= loadModule().then(() => {
    ready = true;
  });
  return loaded;
}

type Json = { [key: string]: unknown };

/** Throws SqlSandboxError unless `sql` is one SELECT that only reads CTEs and `logs.*` through allowed functions. */
export function validatePostgres(sql: string): void {
  if (!ready) throw new Error('the SQL validator is not loaded: await initTranslator() at startup');
  let tree: { stmts?: { stmt?: Json }[] };
  try {
    tree = parseSync(sql);
  } catch (e) {
    throw refuse(`does not parse: ${(e as Error).message}`, sql);
  }
  const statements = tree.stmts ?? [];
  if (statements.length !== 1) throw refuse(`has ${statements.length} statements`, sql);
  const stmt = statements[0].stmt ?? {};
  if (Object.keys(stmt).join() !== 'SelectStmt') throw refuse(`is a ${Object.keys(stmt)[0]} statement, not SELECT`, sql);
  visit(stmt, new Set(), sql);
}

function refuse(detail: string, sql: string, location = 0): SqlSandboxError {
  return new SqlSandboxError(`generated SQL rejected: ${detail}`, sql, location);
}

/** Walks a `{ NodeKind: {...} }` wrapper or a list; `ctes` are the CTE names in scope. */
function visit(value: unknown, ctes: ReadonlySet<string>, sql: string): void {
  if (Array.isArray(value)) {
    for (const item of value) visit(item, ctes, sql);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [kind, node] of Object.entries(value as Json)) {
    if (!NODES.has(kind)) throw refuse(`${kind} is not allowed`, sql, location(node));
    checkNode(kind, node as Json, ctes, sql);
  }
}

function checkNode(kind: string, node: Json, ctes: ReadonlySet<string>, sql: string): void {
  const at = location(node);
  switch (kind) {
    case 'SelectStmt': {
      if (node.intoClause) throw refuse('SELECT INTO is not allowed', sql, at);
      if (node.lockingClause) throw refuse('FOR UPDATE / SHARE is not allowed', sql, at);
      if (node.windowClause) throw refuse('WINDOW clauses are not allowed', sql, at);
      const inner = new Set(ctes);
      const withClause = node.withClause as Json | undefined;
      if (withClause) {
        if (withClause.recursive) throw refuse('WITH RECURSIVE is not allowed', sql, at);
        // A CTE sees the ones before it (non-recursive WITH); the statement body sees all of them.
        for (const item of (withClause.ctes as Json[] | undefined) ?? []) {
          const cte = item.CommonTableExpr as Json | undefined;
          if (!cte) throw refuse('unexpected WITH item', sql, at);
          visit(cte.ctequery, inner, sql);
          inner.add(String(cte.ctename));
        }
      }
      visitChildren(kind, node, inner, sql, 'withClause');
      return;
    }
    case 'RangeVar': {
      const relation = String(node.relname);
      const allowed =
        node.catalogname === undefined && (node.schemaname === undefined ? ctes.has(relation) : node.schemaname === LOG_SCHEMA);
      if (!allowed) throw refuse(`relation ${node.schemaname ? `${node.schemaname as string}.` : ''}${relation} is not allowed`, sql, at);
      return;
    }
    case 'FuncCall': {
      const name = names(node.funcname);
      const [schema, fn] = name.length === 2 ? name : [undefined, name[0]];
      if (!allowedCall(name.length, schema, fn ?? '')) throw refuse(`function ${name.join('.')} is not allowed`, sql, at);
      if (node.over) {
        // The printer writes every window inline: no named windows, no EXCLUDE.
        const over = node.over as Json;
        if (over.name || over.refname) throw refuse('named windows are not allowed', sql, at);
        if (typeof over.frameOptions === 'number' && (over.frameOptions & FRAME_EXCLUSIONS) !== 0)
          throw refuse('window frame exclusions are not allowed', sql, at);
      } else if (isWindowOnly(fn ?? '')) {
        throw refuse(`window function ${fn} needs OVER`, sql, at);
      }
      break;
    }
    case 'RangeFunction': {
      for (const pair of (node.functions as Json[] | undefined) ?? []) {
        const items = ((pair.List as Json | undefined)?.items as Json[] | undefined) ?? [];
        const call = items[0]?.FuncCall as Json | undefined;
        const fn = call ? names(call.funcname).join('.') : '';
        if (!isSetReturning(fn)) throw refuse(`function ${fn || '?'} in FROM is not allowed`, sql, at);
        visit(call?.args, ctes, sql);
      }
      // WITH ORDINALITY is UNNEST … WITH OFFSET; ROWS FROM is never printed.
      if (node.is_rowsfrom) throw refuse('ROWS FROM is not allowed', sql, at);
      return;
    }
    case 'A_Expr': {
      const op = names(node.name);
      if (op.length !== 1 || !OPERATORS.has(op[0]) || !OPERATOR_KINDS.has(String(node.kind)))
        throw refuse(`operator ${op.join('.')} is not allowed`, sql, at);
      break;
    }
    case 'TypeName': {
      const name = names(node.names);
      const type = name.length === 2 && name[0] === 'pg_catalog' ? name[1] : name.length === 1 ? name[0] : undefined;
      if (!type || !TYPES.has(type) || node.arrayBounds) throw refuse(`type ${name.join('.')} is not allowed`, sql, at);
      return;
    }
    case 'SubLink': {
      if (!['EXPR_SUBLINK', 'EXISTS_SUBLINK', 'ANY_SUBLINK'].includes(String(node.subLinkType)))
        throw refuse(`${String(node.subLinkType)} is not allowed`, sql, at);
      // security: `x op ANY (subquery)` names its operator here, not in an A_Expr; an operator is a
      // function call, so it must be on the list too (test/security/walls.test.ts, wall 2).
      const op = names(node.operName);
      if (op.length && (op.length !== 1 || !OPERATORS.has(op[0]))) throw refuse(`operator ${op.join('.')} is not allowed`, sql, at);
      break;
    }
    case 'SortBy':
      // security: `ORDER BY x USING op` calls an arbitrary operator; the printer never emits it.
      if (node.useOp) throw refuse('ORDER BY … USING is not allowed', sql, at);
      break;
  }
  visitChildren(kind, node, ctes, sql);
}

function visitChildren(kind: string, node: Json, ctes: ReadonlySet<string>, sql: string, skip?: string): void {
  if (kind === 'A_Const') return; // holds plain values, not nodes
  for (const [key, child] of Object.entries(node)) {
    if (key === skip || typeof child !== 'object' || child === null) continue;
    const unwrapped = UNWRAPPED[kind]?.[key];
    visit(unwrapped ? { [unwrapped]: child } : child, ctes, sql);
  }
}

/**
 * A call of a catalogued function (postgres/functions.ts): a built-in, bare or in pg_catalog, that is not
 * set-returning (those only in FROM), or one of the service's functions in schema `logs`.
 */
function allowedCall(parts: number, schema: string | undefined, fn: string): boolean {
  if (parts === 1 || (parts === 2 && schema === 'pg_catalog')) {
    // A quoted name with a dot (`"logs.bq_json"(…)`) is one identifier, not a catalogued service function.
    const facts = fn.includes('.') ? undefined : pgFunction(fn);
    return facts !== undefined && facts.kind !== 'setReturning';
  }
  return parts === 2 && schema === LOG_SCHEMA && pgFunction(`${LOG_SCHEMA}.${fn}`) !== undefined;
}

function names(list: unknown): string[] {
  return ((list as Json[] | undefined) ?? []).map((n) => ((n.String as Json | undefined)?.sval as string | undefined) ?? '');
}

function location(node: unknown): number {
  const at = (node as Json | undefined)?.location;
  return typeof at === 'number' && at >= 0 ? at : 0;
}
