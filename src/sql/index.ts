/**
 * The SQL translator: BigQuery-dialect endpoint SQL → one Postgres SELECT with `$n` parameters.
 *
 *   await initTranslator();
 *   const t = translateQuery({ query: 'select count(*) as n from `cloudflare.logs.prod` where project = @p', sources });
 *   // t.sql: 'SELECT count(*) AS "n" FROM "logs"."cloudflare_logs_prod" AS "t0" WHERE ("t0"."project" = $1::text)'
 *   // t.parameters: ['p'];  t.columns: [{ name: 'n', type: 'INT64' }]
 *
 * Pipeline: lexer → parser → resolver (scopes, types, sandbox wall 1) → printer → validate (wall 2).
 */
import type * as Q from './ast/queries.js';
import { SqlLimitError, SqlSandboxError } from './errors.js';
import { tokenize } from './lexer.js';
import { parseQuery } from './parser.js';
import { pg, type PgExpr, type PgQuery } from './postgres/ast.js';
import { printQuery } from './postgres/print.js';
import { dropUnobservableCteOrder } from './postgres/cteOrder.js';
import { dropUnusedCtes } from './postgres/unusedCtes.js';
import { resolveCtes, resolveQuery, TranslationState, type Context, type Resolved } from './resolve.js';
import { typeName } from './types.js';
import { loadValidator, validatePostgres } from './validate.js';
import type { SourceLookup } from '../sources/schema.js';

export { SqlError, SqlSyntaxError, SqlUnsupportedError, SqlNameError, SqlSandboxError, SqlLimitError } from './errors.js';
export { validatePostgres } from './validate.js';

export interface TranslateInput {
  /** Endpoint SQL, BigQuery dialect, with @params. */
  query: string;
  /** Source lookup by name, e.g. 'cloudflare.logs.prod'. */
  sources: SourceLookup;
  /** The caller's SELECT replacing the endpoint's final selection (CONTRACT.md §3). */
  sandboxSql?: string;
  /** Cap on rows: LIMIT min(existing, maxRows), or added. */
  maxRows?: number;
}

export interface Translation {
  /** Postgres SQL, one SELECT, parameters as $1..$n. */
  sql: string;
  /** The @name of each $n, in order ($1 = parameters[0]). */
  parameters: string[];
  /** BigQuery output column names and types. */
  columns: { name: string; type: string }[];
}

/** Loads libpg-query's WASM once; call at startup (translateQuery validates with it). */
export function initTranslator(): Promise<void> {
  return loadValidator();
}

/**
 * Translates an endpoint query, or with `sandboxSql` the endpoint's CTEs followed by the caller's
 * query, which may read only those CTEs and its own. Caller CTE names must differ from the
 * endpoint's (SqlSandboxError otherwise), so a CTE name always means one thing.
 */
export function translateQuery(input: TranslateInput): Translation {
  const endpoint = parseQuery(input.query);
  const state = new TranslationState();
  const base: Context = { translation: state, text: input.query, sources: input.sources, ctes: new Map() };
  const resolved = input.sandboxSql === undefined ? resolveQuery(endpoint, base) : resolveSandboxed(endpoint, input.sandboxSql, base);
  const { query: used, parameters } = dropUnusedCtes(dropUnobservableCteOrder(resolved.query), state.parameters);
  const query = input.maxRows === undefined ? used : capRows(used, input.maxRows);
  const sql = printQuery(query);
  validatePostgres(sql);
  return {
    sql,
    parameters,
    columns: resolved.columns.map((c) => ({ name: c.name, type: typeName(c.type) })),
  };
}

function resolveSandboxed(endpoint: Q.Query, sandboxSql: string, base: Context): Resolved {
  if (!endpoint.ctes.length) {
    throw new SqlSandboxError('this endpoint has no WITH clause, so its query cannot be replaced by `sql`', base.text, endpoint.pos);
  }
  const caller = parseQuery(sandboxSql);
  const { ctx, ctes } = resolveCtes(endpoint.ctes, base);
  const reserved = new Set(ctx.ctes.keys());
  const sandboxed: Context = { translation: base.translation, text: sandboxSql, ctes: ctx.ctes };
  const own = resolveCtes(caller.ctes, sandboxed, reserved);
  const body = resolveQuery({ ...caller, ctes: [] }, own.ctx);
  return { query: { ...body.query, ctes: [...ctes, ...own.ctes] }, columns: body.columns };
}

/** LIMIT min(existing, maxRows): on the outermost query, so it also bounds UNION ALL. */
function capRows(query: PgQuery, maxRows: number): PgQuery {
  if (!Number.isSafeInteger(maxRows) || maxRows < 0) throw new SqlLimitError(`maxRows must be a non-negative integer`, '', 0);
  const cap = pg.number(String(maxRows));
  const existing = query.limit;
  let limit: PgExpr = cap;
  if (existing?.kind === 'literal' && typeof existing.value === 'number') limit = existing.value < maxRows ? existing : cap;
  else if (existing) limit = pg.func('least', [existing, cap]);
  return { ...query, limit };
}

/** Distinct `@names` of a query in first-use order; throws SqlError on lex errors. */
export function queryParameters(query: string): string[] {
  const names = new Set<string>(); // insertion order is first-use order
  for (const t of tokenize(query)) if (t.kind === 'param') names.add(t.text);
  return [...names];
}

/** Names of the top-level WITH CTEs of a query. */
export function queryCtes(query: string): string[] {
  return parseQuery(query).ctes.map((c) => c.name);
}
