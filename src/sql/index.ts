/**
 * The SQL translator: BigQuery-dialect endpoint SQL → one Postgres SELECT with `$n` parameters.
 *
 *   await initTranslator();
 *   const t = translateQuery({ query: 'select count(*) as n from `cloudflare.logs.prod` where project = @p', sources });
 *   // t.sql: 'SELECT count(*) AS "n" FROM "logs"."cloudflare_logs_prod" AS "t0" WHERE ("t0"."project" = $1::text)'
 *   // t.parameters: ['p'];  t.columns: [{ name: 'n', type: 'INT64' }]
 *
 * Pipeline: lexer → parser → resolver (scopes, types, sandbox wall 1) → rewrites for speed (passes.ts)
 * → printer → validate (wall 2).
 */
import { LRUCache } from 'lru-cache';
import type * as Q from './ast/queries.js';
import { SqlLimitError, SqlSandboxError, withSuggestionBudget, type SqlWarning } from './errors.js';
import { tokenize } from './lexer.js';
import { parseQuery } from './parser.js';
import { pg, type PgExpr, type PgQuery } from './postgres/ast.js';
import { checkInlinedSize } from './postgres/inlinedSize.js';
import { printQuery } from './postgres/print.js';
import { searchForIndexes } from './postgres/search.js';
import { splitSearchByHour } from './postgres/searchHours.js';
import { runPasses } from './passes.js';
import { resolveCtes, resolveQuery, rootContext, TranslationState, type Resolved } from './resolve/index.js';
import type { CteBinding } from './resolve/scope.js';
import { nestedEndpoints } from './resolve/endpoints.js';
import type { EndpointLookup, EndpointTable } from './resolve/scope.js';
import { typeName } from './types.js';
import { loadValidator, validatePostgres } from './validate.js';
import type { SearchHours, SourceLookup, SourceTable } from './catalog.js';

export type { SqlWarning } from './errors.js';
export { SqlError, SqlSyntaxError, SqlUnsupportedError, SqlNameError, SqlSandboxError, SqlLimitError } from './errors.js';
export { validatePostgres } from './validate.js';
export { SqlNestingError } from './errors.js';
export { type EndpointLookup, type EndpointTable } from './resolve/scope.js';

export interface TranslateInput {
  /** Endpoint SQL, BigQuery dialect, with @params. */
  query: string;
  /** Source lookup by name, e.g. 'cloudflare.logs.prod'. */
  sources: SourceLookup;
  /** The caller's SELECT replacing the endpoint's final selection (docs/API.md, "Query sandboxing"). */
  sandboxSql?: string;
  /**
   * The trees of `query` and `sandboxSql` when another front end parsed them (LQL, src/lql/):
   * used instead of parsing the text, which stays what error positions point into.
   */
  parsed?: Q.Query;
  sandboxParsed?: Q.Query;
  /** Cap on rows: LIMIT min(existing, maxRows), or added. */
  maxRows?: number;
  /**
   * Endpoints the endpoint text may read as tables, after CTEs and sources (resolve/endpoints.ts);
   * never the caller's `sandboxSql`. Without it, an endpoint name is an unknown table.
   */
  endpoints?: EndpointLookup;
  /** The translated endpoint's own name: reading itself, directly or not, is a cycle. */
  endpointName?: string;
  /**
   * false: none of the rewrites for speed (passes.ts). For the differential test only: the rows
   * must be the same either way.
   */
  optimise?: boolean;
  /**
   * The hours over at the translation's clock (catalog.ts `searchHoursAt`): a query that searches
   * reads each log table split by them, so the open day's hourly search indexes serve it
   * (postgres/searchHours.ts). Absent: no split (the rows are the same either way).
   */
  searchHours?: SearchHours;
}

export interface Translation {
  /** Postgres SQL, one SELECT, parameters as $1..$n. */
  sql: string;
  /** The @name of each $n, in order ($1 = parameters[0]). */
  parameters: string[];
  /** BigQuery output column names and types. */
  columns: { name: string; type: string }[];
  /** Fields no event has brought yet, which read as NULL; the query runs (docs/COMPATIBILITY.md, "Unknown fields"). */
  warnings: SqlWarning[];
  /** The Postgres tree `sql` was printed from: the hourly split reads it (src/query/hourlySplit.ts). */
  tree?: PgQuery;
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
  return withinStack(input, () => {
    const translation = translateWithoutValidation(input);
    validatePostgres(translation.sql);
    return translation;
  });
}

/**
 * translateQuery without wall 2 (the libpg-query validation of the printed SQL): what the
 * translation benchmarks time. Its SQL must never be run unvalidated.
 */
export function translateWithoutValidation(input: TranslateInput): Translation {
  return withinStack(input, () => withSuggestionBudget(() => translateBounded(input)));
}

/**
 * security: the stages recurse over the tree, and the limits of one text (MAX_SQL_NESTING,
 * MAX_SQL_CTES, MAX_SQL_UNION_SELECTS) keep them far from the stack's end. Endpoints reading
 * endpoints stack up to MAX_ENDPOINT_DEPTH texts' worth, so a stack overflow is still answered as
 * what it is, a query too deep (400), not a 500 (issue 25, finding 5). Translation is pure: an
 * overflow leaves no state behind.
 */
function withinStack<T>(input: TranslateInput, translate: () => T): T {
  try {
    return translate();
  } catch (e) {
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      throw new SqlLimitError(
        'the query is nested too deeply to translate (the limit on query nesting)',
        input.sandboxSql ?? input.query,
        0,
      );
    }
    throw e;
  }
}

function translateBounded(input: TranslateInput): Translation {
  const { resolved, state } = input.sandboxSql === undefined ? resolveEndpoint(input) : resolveSandboxed(input, input.sandboxSql);
  const resolvedTree = { query: resolved.query, parameters: state.parameters };
  const { query: optimised, parameters } = input.optimise === false ? resolvedTree : runPasses(resolvedTree, state);
  // After the passes: the first gives a needle's search its rare part (sources' common trigrams),
  // the second only adds a tautology to the WHERE of each SELECT reading a log table, where the
  // search is one an index serves (not a word in most messages).
  const searched = input.optimise === false ? undefined : searchForIndexes(optimised, state.commonTrigrams, state.rareTrigramIndexes);
  const used = searched ? splitSearchByHour(searched.query, input.searchHours, searched.indexServes) : optimised;
  const query = input.maxRows === undefined ? used : capRows(used, input.maxRows);
  checkInlinedSize(query, input.sandboxSql ?? input.query);
  const sql = printQuery(query);
  return {
    sql,
    parameters: [...parameters],
    columns: resolved.columns.map((c) => ({ name: c.name, type: typeName(c.type) })),
    warnings: state.warnings,
    tree: query,
  };
}

interface Resolution {
  readonly resolved: Resolved;
  readonly state: TranslationState;
}

function resolveEndpoint(input: TranslateInput): Resolution {
  const endpoint = input.parsed ?? parseQuery(input.query);
  const state = new TranslationState();
  const endpoints = nestedEndpoints(input.endpoints, input.endpointName);
  const base = rootContext({
    translation: state,
    text: input.query,
    sources: input.sources,
    ctes: new Map(),
    ...(endpoints && { endpoints }),
  });
  return { resolved: resolveQuery(endpoint, base), state };
}

function resolveSandboxed(input: TranslateInput, sandboxSql: string): Resolution {
  let endpoint = reusableEndpointCtes(input);
  let caller: Q.Query;
  if (endpoint) {
    caller = input.sandboxParsed ?? parseQuery(sandboxSql);
  } else {
    // The same steps in the same order as without reuse, so the same error comes first.
    const parsed = parseQuery(input.query);
    if (!parsed.ctes.length) {
      throw new SqlSandboxError('this endpoint has no WITH clause, so its query cannot be replaced by `sql`', input.query, parsed.pos);
    }
    caller = input.sandboxParsed ?? parseQuery(sandboxSql);
    endpoint = resolveEndpointCtes(parsed, input);
  }
  const state = endpoint.state.clone();
  const reserved = new Set(endpoint.visible.keys());
  const sandboxed = rootContext({ translation: state, text: sandboxSql, ctes: endpoint.visible });
  const own = resolveCtes(caller.ctes, sandboxed, reserved);
  const body = resolveQuery({ ...caller, ctes: [] }, own.ctx);
  return { resolved: { query: { ...body.query, ctes: [...endpoint.ctes, ...own.ctes] }, columns: body.columns }, state };
}

/**
 * perf: the endpoint's CTEs, resolved, kept for the next `sql` sent to the same endpoint. The
 * endpoint part of a sandboxed translation (logs.all: nine CTEs, ~850 tokens) does not depend on
 * the caller's `sql`: its parse, its resolution and the state it leaves (parameters $1…$n,
 * the alias counter, the column count) are a function of the endpoint text and of what the
 * source lookups answered. So it is reused when the text is the same and every lookup it made
 * answers the same table with the same field map (schemas are immutable values: a schema
 * change makes a new one); the state is copied, never shared, and the trees are immutable
 * (readonly, and every later pass builds new nodes). Only successful resolutions are kept.
 * A new caller `sql` then costs its own parse, resolution and the printing.
 */
interface EndpointCtes {
  readonly ctes: PgQuery['ctes'];
  /** The CTEs visible to the caller: the endpoint's, by lower-case name. */
  readonly visible: ReadonlyMap<string, CteBinding>;
  /** The state after the endpoint's CTEs; each translation starts from a copy. */
  readonly state: TranslationState;
  /** Every source lookup the resolution made, and its answer. */
  readonly lookups: readonly (readonly [name: string, table: SourceTable | undefined])[];
  /** Every endpoint lookup it made, and the query text answered; and the endpoint's own name. */
  readonly endpointLookups: readonly (readonly [name: string, query: string | undefined])[];
  readonly endpointName: string | undefined;
}

/** By endpoint text; past 64 endpoints the least recently used goes. */
const ENDPOINT_CTES = new LRUCache<string, EndpointCtes>({ max: 64 });

function reusableEndpointCtes(input: TranslateInput): EndpointCtes | undefined {
  const text = input.query;
  const kept = ENDPOINT_CTES.get(text);
  if (!kept) return undefined;
  let same = kept.endpointName === input.endpointName;
  for (const [name, table] of kept.lookups) same &&= sameSource(input.sources(name), table);
  for (const [name, query] of kept.endpointLookups) same &&= input.endpoints?.(name)?.query === query;
  if (!same) {
    ENDPOINT_CTES.delete(text);
    return undefined;
  }
  return kept;
}

function sameSource(a: SourceTable | undefined, b: SourceTable | undefined): boolean {
  if (a === b) return true;
  return (
    a !== undefined &&
    b !== undefined &&
    a.name === b.name &&
    a.pgSchema === b.pgSchema &&
    a.table === b.table &&
    a.fields === b.fields &&
    a.hot === b.hot &&
    a.commonTrigrams === b.commonTrigrams &&
    a.rareTrigramIndexes === b.rareTrigramIndexes
  );
}

function resolveEndpointCtes(endpoint: Q.Query, input: TranslateInput): EndpointCtes {
  const lookups: [string, SourceTable | undefined][] = [];
  const sources: SourceLookup = (name) => {
    const table = input.sources(name);
    lookups.push([name, table]);
    return table;
  };
  const endpointLookups: [string, string | undefined][] = [];
  const lookup =
    input.endpoints &&
    ((name: string): EndpointTable | undefined => {
      const found = input.endpoints!(name);
      endpointLookups.push([name, found?.query]);
      return found;
    });
  const endpoints = nestedEndpoints(lookup, input.endpointName);
  const state = new TranslationState();
  const { ctx, ctes } = resolveCtes(
    endpoint.ctes,
    rootContext({ translation: state, text: input.query, sources, ctes: new Map(), ...(endpoints && { endpoints }) }),
  );
  const resolved: EndpointCtes = { ctes, visible: ctx.ctes, state, lookups, endpointLookups, endpointName: input.endpointName };
  ENDPOINT_CTES.set(input.query, resolved);
  return resolved;
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
