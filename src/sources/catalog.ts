/**
 * The source catalog: every source's row held in memory, so the translator's lookups
 * (SourceLookup, src/sql/catalog.ts) are synchronous. It is read again after every change made
 * through SourceService and on a timer (src/context.ts), so a change made by another replica is
 * seen within seconds; `version` changes with every change and keys the translation cache.
 */
import { NotFoundError } from '../errors.js';
import { LOG_SCHEMA } from '../storage/logTables.js';
import { rareTrigramsFunctionOf } from '../storage/searchIndexes.js';
import type { CommonTrigramsRecord, SourceRepository, SourceRecord } from './repository.js';
import type { SourceLookup, SourceTable } from './schema.js';

export class SourceCatalog {
  private byName = new Map<string, SourceRecord>();
  private byId = new Map<string, SourceRecord>();
  /** Each log table's search facts by column (src/storage/commonTrigrams.ts), for the translator. */
  private searchFacts = new Map<string, SearchFacts>();
  /** Changes whenever any source or schema changes; part of the translation cache key. */
  version = 0;
  private signature = '';
  private reloadsStarted = 0;
  private appliedReload = 0;

  constructor(private readonly repository: Pick<SourceRepository, 'list' | 'listCommonTrigrams'>) {}

  readonly lookup: SourceLookup = (name) => {
    const record = this.byName.get(name);
    return record ? toSourceTable(record, this.searchFacts.get(record.table_name)) : undefined;
  };

  /**
   * Reads the catalog again. Reloads may overlap (the timer, a change made here, a miss in get)
   * and their answers can arrive in any order; a read started later sees every change committed
   * before it started, so an answer is applied only if no later-started read was applied already.
   */
  async reload(): Promise<void> {
    const started = ++this.reloadsStarted;
    const [rows, trigrams] = await Promise.all([this.repository.list(), this.repository.listCommonTrigrams()]);
    if (started < this.appliedReload) return;
    this.appliedReload = started;
    // A day's new common trigrams change translations too: they key the translation cache through `version`.
    const signature = JSON.stringify([
      rows.map((r) => [r.id, r.name, r.updated_at]),
      trigrams.map((t) => [t.table_name, t.column_name, t.partition, t.index_function]),
    ]);
    if (signature === this.signature) return;
    this.signature = signature;
    this.byName = new Map(rows.map((r) => [r.name, r]));
    this.byId = new Map(rows.map((r) => [r.id, r]));
    this.searchFacts = byTable(trigrams);
    this.version++;
  }

  list(): SourceRecord[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** By UUID or name, as the catalog holds it now (no reload). */
  find(idOrName: string): SourceRecord | undefined {
    return this.byId.get(idOrName) ?? this.byName.get(idOrName);
  }

  /** By UUID or name; reloads once on a miss (another replica may have created it); 404 when there is none. */
  async get(idOrName: string): Promise<SourceRecord> {
    const found = this.find(idOrName);
    if (found) return found;
    await this.reload();
    const again = this.find(idOrName);
    if (!again)
      throw new NotFoundError(`No source named or with id "${idOrName}".`, [
        { domain: 'sources', reason: 'notFound', message: 'unknown source', location: 'source' },
      ]);
    return again;
  }
}

/** A log table's search facts: its columns' common trigrams and rare-trigram index functions (catalog.ts `SourceTable`). */
export interface SearchFacts {
  readonly commonTrigrams?: Readonly<Record<string, readonly string[]>>;
  readonly rareTrigramIndexes?: Readonly<Record<string, string>>;
}

/** A source as the translator sees it. */
export function toSourceTable(record: SourceRecord, search: SearchFacts = {}): SourceTable {
  const table: SourceTable = {
    name: record.name,
    pgSchema: LOG_SCHEMA,
    table: record.table_name,
    fields: record.schema,
    ...(search.commonTrigrams && { commonTrigrams: search.commonTrigrams }),
    ...(search.rareTrigramIndexes && { rareTrigramIndexes: search.rareTrigramIndexes }),
  };
  return record.hot_leaves?.length ? { ...table, hot: record.hot_leaves } : table;
}

/** The kept search facts by table, then column; a column whose list is empty is left out. */
function byTable(rows: readonly CommonTrigramsRecord[]): Map<string, SearchFacts> {
  const out = new Map<string, { commonTrigrams?: Record<string, readonly string[]>; rareTrigramIndexes?: Record<string, string> }>();
  for (const r of rows) {
    if (!r.trigrams.length) continue;
    const facts = out.get(r.table_name) ?? {};
    (facts.commonTrigrams ??= {})[r.column_name] = r.trigrams;
    // Only the function of this very set: the translator subtracts the set the function leaves out.
    if (r.index_function && r.index_function === rareTrigramsFunctionOf(r.trigrams))
      (facts.rareTrigramIndexes ??= {})[r.column_name] = r.index_function;
    out.set(r.table_name, facts);
  }
  return out;
}
