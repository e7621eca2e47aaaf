/**
 * Endpoints that read other endpoints (``select date from `nested` ``), seen from the
 * endpoints layer. The translator expands a named endpoint as a derived table (src/sql/resolve/
 * endpoints.ts: a name is a CTE first, then a source, then an endpoint); it reads endpoints
 * synchronously, so the ones a query may read are loaded first, level by level.
 *
 * Who reads whom is found from the stored texts (their parse trees), not from a stored graph:
 * an endpoint reads `name` when its query names `name` as a table that is not one of its own
 * CTEs (and, for endpoints, when no source has that name: a source comes first).
 */
import { LRUCache } from 'lru-cache';
import type { SourceLookup } from '../sources/schema.js';
import type { SearchHours } from '../sql/catalog.js';
import { MAX_ENDPOINT_DEPTH } from '../inputLimits.js';
import { queryParameters, translateQuery, type EndpointTable, type Translation } from '../sql/index.js';
import { SqlError } from '../sql/errors.js';
import type * as Q from '../sql/ast/queries.js';
import { queryTables, type QueryTables } from '../sql/tables.js';
import type { EndpointRecord, ParameterDeclaration } from './repository.js';

/** What nesting needs of an endpoint: stored, or the definition being saved. */
export type NestedEndpoint = Pick<EndpointRecord, 'name' | 'query' | 'parameters'> & { readonly id?: string };

/** perf: parse results by query text (false: it does not parse); queries are re-read on every management change. */
const TABLES = new LRUCache<string, QueryTables | false>({ max: 1_000 });

function tablesOf(query: string): QueryTables | undefined {
  let found = TABLES.get(query);
  if (found === undefined) {
    try {
      found = queryTables(query);
    } catch (err) {
      if (!(err instanceof SqlError)) throw err;
      found = false; // the translator reports it where it matters
    }
    TABLES.set(query, found);
  }
  return found || undefined;
}

/** Whether `query` names `name` as a table that is not one of its CTEs. */
export function namesTable(query: string, name: string): boolean {
  const t = tablesOf(query);
  return t !== undefined && t.tables.includes(name) && !t.ctes.includes(name.toLowerCase());
}

/** Table names of `query` that may be endpoints: neither one of its CTEs nor a source. */
function endpointCandidates(query: string, sources: SourceLookup): string[] {
  const t = tablesOf(query);
  if (!t) return [];
  return t.tables.filter((name) => !t.ctes.includes(name.toLowerCase()) && sources(name) === undefined);
}

/**
 * Every stored endpoint `query` may read, directly or through others, by name: one database
 * query per level, MAX_ENDPOINT_DEPTH + 1 levels (one past the limit, so the translator sees a
 * chain that is too deep and names it). `except` is the endpoint being saved: its stored row is
 * not loaded (its new definition answers for its name).
 */
export async function loadReadable(
  query: string,
  sources: SourceLookup,
  findByNames: (names: readonly string[]) => Promise<EndpointRecord[]>,
  except?: { id?: string; name: string },
): Promise<Map<string, EndpointRecord>> {
  const loaded = new Map<string, EndpointRecord>();
  const asked = new Set<string>(except ? [except.name] : []);
  let texts = [query];
  for (let level = 0; level <= MAX_ENDPOINT_DEPTH && texts.length; level++) {
    const names = [...new Set(texts.flatMap((q) => endpointCandidates(q, sources)))].filter((n) => !asked.has(n));
    for (const n of names) asked.add(n);
    const rows = (await findByNames(names)).filter((r) => r.id !== except?.id);
    for (const row of rows) loaded.set(row.name, row);
    texts = rows.map((r) => r.query);
  }
  return loaded;
}

/** A translation and the endpoints it read (directly or not), in first-read order. */
export interface NestedTranslation {
  readonly translation: Translation;
  readonly read: readonly NestedEndpoint[];
}

/**
 * Translates the endpoint `self` (its name and query), reading endpoints from `endpoints`
 * (a map by name, or a lookup), and records which ones it read. Throws SqlError.
 */
export function translateNested(
  self: { name: string; query: string; maxRows?: number; sandboxSql?: string; sandboxParsed?: Q.Query; searchHours?: SearchHours },
  sources: SourceLookup,
  endpoints: (name: string) => NestedEndpoint | undefined,
): NestedTranslation {
  const read = new Map<string, NestedEndpoint>();
  const lookup = (name: string): EndpointTable | undefined => {
    const found = endpoints(name);
    if (found && !read.has(found.name)) read.set(found.name, found);
    return found;
  };
  const translation = translateQuery({
    query: self.query,
    sources,
    endpoints: lookup,
    endpointName: self.name,
    ...(self.maxRows !== undefined && { maxRows: self.maxRows }),
    ...(self.sandboxSql !== undefined && { sandboxSql: self.sandboxSql }),
    ...(self.sandboxParsed !== undefined && { sandboxParsed: self.sandboxParsed }),
    ...(self.searchHours !== undefined && { searchHours: self.searchHours }),
  });
  return { translation, read: [...read.values()] };
}

/** The `@params` an endpoint uses: those of its own text, then those of every endpoint it reads (same name, same value). */
export function nestedParameters(query: string, read: readonly NestedEndpoint[]): string[] {
  const names = new Set(queryParameters(query));
  for (const e of read) for (const n of queryParameters(e.query)) names.add(n);
  return [...names];
}

/** The declaration a read endpoint gives a parameter, for readers that do not declare it themselves. */
export function inheritedDeclaration(name: string, read: readonly NestedEndpoint[]): ParameterDeclaration | undefined {
  for (const e of read) {
    const found = e.parameters.find((p) => p.name === name);
    if (found) return { ...found };
  }
  return undefined;
}

/** Endpoints whose own text names the source `name` (a source comes before any endpoint of that name). */
export function sourceReaders<E extends NestedEndpoint>(all: readonly E[], name: string): E[] {
  return all.filter((e) => namesTable(e.query, name));
}

/** Endpoints that read the endpoint `name` directly (no source has that name). */
export function directReaders<E extends NestedEndpoint>(all: readonly E[], name: string, sources: SourceLookup): E[] {
  if (sources(name) !== undefined) return [];
  return all.filter((e) => e.name !== name && namesTable(e.query, name));
}

/** Endpoints that read the endpoint `name`, directly or through others, nearest first. */
export function dependants<E extends NestedEndpoint>(all: readonly E[], name: string, sources: SourceLookup): E[] {
  const found = new Map<string, E>();
  let frontier = [name];
  for (let level = 0; level <= MAX_ENDPOINT_DEPTH && frontier.length; level++) {
    const next: string[] = [];
    for (const n of frontier) {
      for (const e of directReaders(all, n, sources)) {
        if (e.name === name || found.has(e.name)) continue;
        found.set(e.name, e);
        next.push(e.name);
      }
    }
    frontier = next;
  }
  return [...found.values()];
}
