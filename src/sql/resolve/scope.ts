/** The resolver's state: shared per translation (parameters, aliases) and per SELECT (scopes). */
import type { SourceLookup, SourceTable } from '../catalog.js';
import type { PgQuery } from '../postgres/ast.js';
import { SqlLimitError, sqlWarning, type SqlWarning } from '../errors.js';
import type { BqType, HotRead, HotReads, Typed } from '../types.js';
import type * as Q from '../ast/queries.js';

/**
 * security: `SELECT *` multiplies columns. `c1 as (select * from c0 a, c0 b)`, repeated, doubles
 * them per CTE: 600 characters of SQL gave 65,536 columns, 3.5 MB of SQL and 6.6 s of synchronous
 * work, and a few more CTEs exhaust memory. A chain of `select *` over a 1,600-column CTE took
 * 47 s and 1.5 GB. One SELECT may have as many columns as Postgres allows (1664), one translation
 * 20,000 in all (test/security/corpus.ts, hugeOrDeepInput).
 */
export const MAX_SELECT_COLUMNS = 1664;
export const MAX_TRANSLATION_COLUMNS = 20_000;
const MAX_WARNINGS = 50;

export interface Column {
  readonly name: string;
  readonly type: BqType;
  /** The select item's hot leaves (resolve/hot.ts): exposed as hidden columns when the query is a CTE or derived table. */
  readonly hot?: HotReads;
  /** Hidden output columns of this column's hot leaves, by relative path (set by exposeHotColumns). */
  readonly hotColumns?: ReadonlyMap<string, { readonly name: string; readonly type: HotRead['type']; readonly leaf: HotRead['leaf'] }>;
}

/** A resolved query: its Postgres tree and its output columns. */
export interface Resolved {
  readonly query: PgQuery;
  readonly columns: readonly Column[];
  /** Set when each row is one event of this source (a plain SELECT over one source, or over such a relation: resolve/events.ts). */
  readonly eventSource?: SourceTable;
}

/** A CTE visible by name. */
export interface CteBinding {
  readonly name: string;
  readonly columns: readonly Column[];
  readonly eventSource?: SourceTable;
}

/** `t0` … `t255`, made once. */
const ALIASES: readonly string[] = Array.from({ length: 256 }, (_, i) => `t${i}`);

/** State shared by one translation: parameter numbering and fresh aliases. */
export class TranslationState {
  readonly parameters: string[] = [];
  /** Warnings, in the order met; bounded (hostile input could name thousands of unknown fields). */
  readonly warnings: SqlWarning[] = [];

  warn(detail: string, text: string, pos: number): void {
    if (this.warnings.length < MAX_WARNINGS && !this.warnings.some((w) => w.message.startsWith(detail))) {
      this.warnings.push(sqlWarning(detail, text, pos));
    }
  }

  /** Window calls resolved so far: a clause that adds one calls a window function (resolve/queries.ts). */
  windows = 0;
  /**
   * perf: what the rewrite passes may act on, counted as it is resolved, so a pass with nothing
   * to do skips its walk of the whole tree (src/sql/passes.ts): scalar subqueries (constant CTEs
   * are read through them) and SELECTs with GROUP BY (narrowing).
   */
  scalarSubqueries = 0;
  groupedSelects = 0;
  /** The common trigrams of the log tables read, by alias (catalog.ts `SourceTable.commonTrigrams`; postgres/search.ts searchForIndexes). */
  readonly commonTrigrams = new Map<string, Readonly<Record<string, readonly string[]>>>();
  /** Their rare-trigram index functions, by alias (catalog.ts `SourceTable.rareTrigramIndexes`). */
  readonly rareTrigramIndexes = new Map<string, Readonly<Record<string, string>>>();
  private aliases = 0;
  private columns = 0;

  /** Throws SqlLimitError when one SELECT list has grown past MAX_SELECT_COLUMNS. */
  checkSelectColumns(count: number, text: string, pos: number): void {
    if (count > MAX_SELECT_COLUMNS) throw new SqlLimitError(`a SELECT list may have at most ${MAX_SELECT_COLUMNS} columns`, text, pos);
  }

  /** Counts the output columns of one more SELECT; throws SqlLimitError past MAX_TRANSLATION_COLUMNS in all. */
  addColumns(count: number, text: string, pos: number): void {
    this.checkSelectColumns(count, text, pos);
    this.columns += count;
    if (this.columns > MAX_TRANSLATION_COLUMNS)
      throw new SqlLimitError(`the query has more than ${MAX_TRANSLATION_COLUMNS} output columns in all`, text, pos);
  }

  parameter(name: string): number {
    const n = this.numbers.get(name);
    if (n !== undefined) return n;
    const added = this.parameters.push(name);
    this.numbers.set(name, added);
    return added;
  }
  /** `$n` of each name in `parameters` (perf: a query uses a few names many times). */
  private readonly numbers = new Map<string, number>();

  alias(): string {
    const n = this.aliases++;
    return n < ALIASES.length ? ALIASES[n] : `t${n}`;
  }

  /** An independent copy: the same parameters, alias counter and column count (index.ts reuses a resolved endpoint from one). */
  clone(): TranslationState {
    const copy = new TranslationState();
    copy.parameters.push(...this.parameters);
    copy.warnings.push(...this.warnings);
    for (const [name, n] of this.numbers) copy.numbers.set(name, n);
    copy.aliases = this.aliases;
    copy.columns = this.columns;
    copy.scalarSubqueries = this.scalarSubqueries;
    copy.groupedSelects = this.groupedSelects;
    for (const [alias, trigrams] of this.commonTrigrams) copy.commonTrigrams.set(alias, trigrams);
    for (const [alias, functions] of this.rareTrigramIndexes) copy.rareTrigramIndexes.set(alias, functions);
    return copy;
  }
}

/** An endpoint as the translator needs it: its name and stored query. */
export interface EndpointTable {
  readonly name: string;
  readonly query: string;
}

/** Endpoint by name, as written in the query; undefined when there is none. */
export type EndpointLookup = (name: string) => EndpointTable | undefined;

/** Endpoints a context may read, and the chain of endpoints being expanded (for cycles and depth; resolve/endpoints.ts). */
export interface NestedEndpoints {
  readonly lookup: EndpointLookup;
  /** Names from the outermost endpoint to the one whose text is being resolved. */
  readonly chain: readonly string[];
  /** Endpoints expanded above this text (0 in the outermost endpoint's text). */
  readonly depth: number;
}

/** Resolves a query; `parent` is the enclosing scope of a correlated subquery. */
export type ResolveQuery = (q: Q.Query, ctx: Context, parent?: Scope) => Resolved;

/** Where names come from while resolving one piece of text. */
export interface Context {
  /**
   * resolve/queries.ts resolveQuery, for the expressions and FROM items that hold queries
   * (subqueries, derived tables, endpoints read as tables): passed down rather than imported, so
   * the resolver's modules have no import cycle (queries.ts imports them). rootContext sets it.
   */
  readonly resolveQuery: ResolveQuery;
  readonly translation: TranslationState;
  /** The text being resolved, for error positions (the endpoint query or the caller's sandboxed SQL). */
  readonly text: string;
  /** Sources may be read (endpoint text); undefined in sandboxed SQL, where only CTEs are tables. */
  readonly sources?: SourceLookup;
  readonly ctes: ReadonlyMap<string, CteBinding>;
  /** Endpoints may be read as tables (endpoint text only, after CTEs and sources; resolve/endpoints.ts). */
  readonly endpoints?: NestedEndpoints;
}

export type Range =
  | { readonly kind: 'source'; readonly names: readonly string[]; readonly alias: string; readonly source: SourceTable }
  | {
      readonly kind: 'relation';
      readonly names: readonly string[];
      readonly alias: string;
      readonly columns: readonly Column[];
      readonly eventSource?: SourceTable;
    }
  | { readonly kind: 'value'; readonly names: readonly string[]; readonly value: Typed };

/** The names one SELECT sees: its FROM items, JOIN USING columns, and (HAVING, ORDER BY) its select aliases. */
export class Scope {
  constructor(
    readonly parent?: Scope,
    readonly ranges: Range[] = [],
    readonly using = new Set<string>(),
    /** Select-list aliases, consulted after every column: BigQuery lets HAVING and ORDER BY name them. */
    readonly aliases: readonly SelectTarget[] = [],
  ) {}

  withAliases(aliases: readonly SelectTarget[]): Scope {
    return new Scope(this.parent, this.ranges, this.using, aliases);
  }
}

/** Column names of the physical log tables, typed. */

/** One column of a select list: its output name, value, and whether the query named it. */
export interface SelectTarget {
  readonly name: string;
  readonly value: Typed;
  readonly explicit: boolean;
}
