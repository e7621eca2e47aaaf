import type { DatabaseCapabilities } from '../db/capabilities.js';
import type { Knex } from 'knex';
import type pg from 'pg';
import type { Database } from '../db/pool.js';
import { runBuilt, withTransaction } from '../db/transaction.js';
import { ConflictError, NotFoundError, UnprocessableError } from '../errors.js';
import { createLogTable, dropLogTable, ensurePartitions, LOG_SCHEMA } from '../storage/logTables.js';
import { DEFAULT_HOT_LEAVES, DEFAULT_SOURCES, upgradedDefaultLeaves } from './defaults.js';
import { parseHotLeaves } from './hotLeafInput.js';
import { addHotColumns, dropHotColumns, hotColumnDefinitions, type HotLeaf, type HotLeafState } from '../storage/hotLeaves.js';
import { deleteFacts, resetFacts } from '../storage/hotLeafFacts.js';
import { listPartitions, logTableName, partitionCounts, type PartitionCount } from '../storage/logTables.js';
import { coveringIndexes } from '../storage/coveringIndexes.js';
import { searchableColumns } from '../storage/searchIndexes.js';
import { SourceCatalog } from './catalog.js';
import { SourceRepository, type SourceRecord } from './repository.js';
import { fieldMapCovers, mergeFieldMaps, tableNameForSource, type FieldMap, type SourceLookup } from './schema.js';

const DAY_MS = 86_400_000;
/** Partitions kept ready ahead of today, so ingest rarely creates one on the hot path. */
export const PARTITION_DAYS_AHEAD = 2;

/**
 * Sources: their rows, their log tables, and an in-memory catalog the translator reads
 * synchronously. The catalog reloads after every change made here and on a timer, so a
 * change made by another replica is seen within seconds. What runs in the background on the
 * log tables (partitions, retention, hot-leaf backfill, index upkeep) is src/upkeep/.
 */
export class SourceService {
  /** The rows in memory, for the translator's synchronous lookups (src/sources/catalog.ts). */
  readonly catalog: SourceCatalog;
  readonly repository: SourceRepository;

  private readonly knex: Knex;
  private readonly pool: pg.Pool;
  private readonly capabilities: DatabaseCapabilities;

  /**
   * `readersOf(name)`: the endpoints whose query names the source `name` (the rename guard asks).
   * Given by the wiring (src/context.ts), so sources need not know what endpoints are.
   */
  constructor(
    db: Database,
    private readonly defaultRetentionDays: number,
    private readonly readersOf: (sourceName: string) => Promise<ReadonlyArray<{ name: string }>>,
    /** A source's hot columns were dropped or its search_index changed: its indexes are rebuilt now, not at the next minute's upkeep (src/upkeep/sourceUpkeep.ts). */
    private readonly indexesChanged: (sourceId: string) => void = () => undefined,
    /** Where the days a deleted source had rows in are reported: the hourly split's exact invalidation (src/query/hourlyStore.ts bumpDays). */
    private readonly hourly?: { bumpDays(table: string, dayStarts: readonly number[]): Promise<void> },
  ) {
    this.knex = db.knex;
    this.pool = db.pool;
    this.capabilities = db.capabilities;
    this.repository = new SourceRepository(db.knex);
    this.catalog = new SourceCatalog(this.repository);
    this.lookup = this.catalog.lookup;
  }

  // The catalog's reads, here too: most callers hold the service (Pick<SourceService, 'lookup' | 'get'>).
  readonly lookup: SourceLookup;
  get catalogVersion(): number {
    return this.catalog.version;
  }
  reload(): Promise<void> {
    return this.catalog.reload();
  }
  list(): SourceRecord[] {
    return this.catalog.list();
  }
  get(idOrName: string): Promise<SourceRecord> {
    return this.catalog.get(idOrName);
  }

  /** `id`: the importer keeps the original's source token as the id (src/import/logflare/catalog.ts); else a new one. */
  async create(input: {
    id?: string;
    name: string;
    retention_days?: number;
    schema?: FieldMap;
    hot_leaves?: unknown;
    search_index?: readonly string[];
  }): Promise<SourceRecord> {
    const hot = input.hot_leaves === undefined ? [] : parseHotLeaves(input.hot_leaves, input.schema ?? {});
    if (input.search_index) checkSearchIndex(input.search_index, hot);
    const record = await this.createRow({ ...input, hot });
    if (input.search_index) await this.repository.saveSearchIndex(record.id, input.search_index);
    await this.reload();
    return input.search_index ? this.get(record.id) : record;
  }

  /**
   * The columns with a trigram search index (src/storage/searchIndexes.ts): 422 naming a column
   * that is neither event_message nor a STRING hot leaf of the source. The indexes are built by
   * the index upkeep, started now rather than at the next minute's job (not awaited: building on
   * every partition can take minutes; a failure is left to that job, which retries).
   */
  async setSearchIndex(idOrName: string, columns: readonly string[]): Promise<SourceRecord> {
    const source = await this.get(idOrName);
    checkSearchIndex(columns, source.hot_leaves ?? []);
    await this.repository.saveSearchIndex(source.id, columns);
    await this.reload();
    this.indexesChanged(source.id);
    return this.get(source.id);
  }

  /** The row, its log table and first partitions, in one transaction; the caller reloads the catalog. */
  private async createRow(input: {
    id?: string;
    name: string;
    retention_days?: number;
    schema?: FieldMap;
    hot: readonly HotLeaf[];
  }): Promise<SourceRecord> {
    // Names and retention are validated against the body schema first (src/sources/body.ts).
    const { name } = input;
    const retention = input.retention_days ?? this.defaultRetentionDays;
    if (await this.repository.find(name)) throw new ConflictError(`A source named "${name}" already exists.`);
    return withTransaction(this.pool, async (client) => {
      const table = await freeTableName(client, name);
      const [row] = await runBuilt<SourceRecord>(
        client,
        this.repository.insertQuery({
          ...(input.id !== undefined && { id: input.id }),
          name,
          table_name: table,
          retention_days: retention,
          schema: JSON.stringify(input.schema ?? {}),
          // A new table has no rows to backfill.
          hot_leaves: JSON.stringify(input.hot.map((l): HotLeafState => ({ ...l, pending_partitions: [] }))),
        }),
      );
      await createLogTable(client, table, hotColumnDefinitions(input.hot), coveringIndexes(table, input.hot), this.capabilities);
      await resetFacts(
        client,
        table,
        input.hot.map((l) => l.path),
        true,
      );
      await ensurePartitions(client, table, Date.now() - DAY_MS, Date.now() + PARTITION_DAYS_AHEAD * DAY_MS);
      return row;
    }).catch(nameConflict(name));
  }

  /** Events per day partition of a source and when retention drops each (docs/API.md, "Sources"). */
  async partitions(idOrName: string): Promise<PartitionCount[]> {
    const source = await this.get(idOrName);
    return partitionCounts(this.pool, source.table_name, source.retention_days);
  }

  async update(idOrName: string, input: { name?: string; retention_days?: number }): Promise<SourceRecord> {
    const source = await this.get(idOrName);
    const patch: Partial<Pick<SourceRecord, 'name' | 'retention_days'>> = {};
    if (input.name !== undefined) patch.name = input.name;
    if (input.retention_days !== undefined) patch.retention_days = input.retention_days;
    if (patch.name !== undefined && patch.name !== source.name) await this.refuseRenameIfRead(source.name);
    const row = await this.repository.update(source.id, patch).catch(nameConflict(String(patch.name)));
    await this.reload();
    return row!;
  }

  /**
   * Endpoint queries name sources by name, so a rename would break them: 409 listing the
   * endpoints whose query names this source (they are not rewritten; change them first).
   */
  private async refuseRenameIfRead(name: string): Promise<void> {
    const readers = await this.readersOf(name);
    if (!readers.length) return;
    const names = readers.map((r) => `"${r.name}"`).join(', ');
    throw new ConflictError(
      `Source "${name}" cannot be renamed: ${readers.length === 1 ? 'endpoint' : 'endpoints'} ${names} ${readers.length === 1 ? 'reads' : 'read'} it by name. Change ${readers.length === 1 ? 'that endpoint' : 'those endpoints'} first.`,
      readers.map((r) => ({ domain: 'sources', reason: 'readByEndpoint', message: `read by endpoint ${r.name}`, location: r.name })),
    );
  }

  async delete(idOrName: string): Promise<void> {
    const source = await this.get(idOrName);
    const days = await withTransaction(this.pool, async (client) => {
      await runBuilt(client, this.repository.deleteQuery(source.id));
      const partitions = await listPartitions(client, source.table_name);
      await dropLogTable(client, source.table_name);
      await deleteFacts(
        client,
        source.table_name,
        (source.hot_leaves ?? []).map((l) => l.path),
      );
      return partitions.map((p) => p.dayMs);
    });
    // After COMMIT, as ingest: every hour the table had rows in gets a new write version, so a
    // source created again under the same table name (the importer keeps ids) reads none of them.
    await this.hourly?.bumpDays(logTableName(source.table_name), days);
    await this.reload();
  }

  /**
   * Creates the default sources where missing, and widens the schema of existing ones with the
   * fields a default source starts with (an install from before those fields were known).
   * `defaultSchema` gives those fields (src/ingest/defaultSchemas.ts: inferred by ingest, which
   * builds on sources, so it is passed in rather than imported).
   */
  async ensureDefaults(defaultSchema: (name: string) => FieldMap): Promise<void> {
    await this.reload();
    let changed = false;
    for (const { name } of DEFAULT_SOURCES) {
      const schema = defaultSchema(name);
      const existing = this.catalog.find(name);
      const hot = DEFAULT_HOT_LEAVES[name] ?? [];
      if (existing) {
        if (!fieldMapCovers(existing.schema, schema))
          changed = (await withTransaction(this.pool, (client) => this.mergeSchema(client, existing.id, schema))) || changed;
        // An install from before hot leaves: the defaults, backfilled in the background (SourceUpkeep.runHotLeafBackfill, src/upkeep/sourceUpkeep.ts).
        if (existing.hot_leaves === null) {
          await this.applyHotLeaves(existing, hot);
          changed = true;
          continue;
        }
        // Stored before leaves named their index: a default leaf takes the default's (src/sources/defaults.ts).
        const index = (l: HotLeaf) => hot.find((d) => d.path === l.path && d.type === l.type)?.index ?? 'project';
        const stored = existing.hot_leaves.map((l): HotLeaf => ({ path: l.path, type: l.type, index: l.index ?? index(l) }));
        // Leaves an earlier release declared and nobody changed: today's defaults, the new ones
        // backfilled in the background as above, their covering indexes rebuilt partition by
        // partition once filled (SourceUpkeep.runIndexUpkeep). A list set through the API is kept.
        const upgrade = upgradedDefaultLeaves(name, stored);
        if (upgrade) {
          await this.applyHotLeaves(existing, upgrade);
          changed = true;
        } else if (existing.hot_leaves.some((l) => l.index === undefined)) {
          await this.applyHotLeaves(existing, stored);
          changed = true;
        }
        continue;
      }
      try {
        await this.createRow({ name, schema, hot });
        changed = true;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err; // another replica created it first
      }
    }
    if (changed) await this.reload();
  }

  /**
   * Merges newly seen fields into a source's schema inside the caller's transaction, under a
   * row lock so that two concurrent batches do not lose each other's fields.
   * Returns true when the schema changed.
   */
  async mergeSchema(client: pg.PoolClient, sourceId: string, seen: FieldMap): Promise<boolean> {
    const cached = this.catalog.find(sourceId);
    if (cached && fieldMapCovers(cached.schema, seen)) return false;
    const [row] = await runBuilt<SourceRecord>(client, this.repository.lockQuery(sourceId));
    if (!row) throw new NotFoundError('The source was deleted while the batch was written.');
    if (fieldMapCovers(row.schema, seen)) return false;
    await runBuilt(client, this.repository.saveSchemaQuery(sourceId, mergeFieldMaps(row.schema, seen)));
    return true;
  }

  /**
   * Sets a source's hot leaves (docs/API.md, "Hot leaves"): validated against its schema; new
   * columns are added (a catalog change under a short lock, storage/hotLeaves.ts), the row lists
   * every partition that exists now as pending for the new leaves (SourceUpkeep.runHotLeafBackfill fills them),
   * removed leaves lose their columns once the catalog no longer lists them.
   */
  async setHotLeaves(idOrName: string, value: unknown): Promise<SourceRecord> {
    const source = await this.get(idOrName);
    await this.applyHotLeaves(source, parseHotLeaves(value, source.schema));
    await this.reload();
    return this.get(source.id);
  }

  private async applyHotLeaves(source: SourceRecord, leaves: readonly HotLeaf[]): Promise<void> {
    const current = source.hot_leaves ?? [];
    const kept = (l: HotLeaf) => current.find((c) => c.path === l.path && c.type === l.type);
    const added = leaves.filter((l) => !kept(l));
    const removed = current.filter((c) => !leaves.some((l) => l.path === c.path && l.type === c.type));
    // A leaf whose type changes is dropped and added again: its column changes type.
    await dropHotColumns(
      this.pool,
      source.table_name,
      removed.map((r) => r.path).filter((p) => added.some((a) => a.path === p)),
    );
    await addHotColumns(this.pool, source.table_name, added);
    const partitions = added.length ? await newestPartitionsFirst(this.pool, source.table_name) : [];
    // A kept leaf whose `index` changed keeps its column and backfill; only indexes change (SourceUpkeep.runIndexUpkeep).
    const states = leaves.map((l): HotLeafState => ({ ...l, pending_partitions: kept(l)?.pending_partitions ?? partitions }));
    const gone = removed.map((r) => r.path).filter((p) => !added.some((a) => a.path === p));
    await withTransaction(this.pool, async (client) => {
      await runBuilt(client, this.repository.saveHotLeavesQuery(source.id, states));
      // New columns start not exact: their older rows are checked by the backfill (src/storage/hotLeafFacts.ts).
      await resetFacts(
        client,
        source.table_name,
        added.map((a) => a.path),
        partitions.length === 0,
      );
      await deleteFacts(client, source.table_name, gone);
    });
    // After the catalog stopped listing them: readers and writers of this process no longer name them
    // (other replicas' writers retry a batch once on the missing column, ingest/write.ts).
    await this.reload();
    await dropHotColumns(this.pool, source.table_name, gone);
    // A dropped column took every index INCLUDing it along: rebuilt now rather than at the next
    // minute's job (src/storage/indexUpkeep.ts; a plain index first if a backfill holds up the
    // covering one). Not awaited: building on every partition can take minutes; a failure is
    // left to that job, which retries.
    if (removed.length) this.indexesChanged(source.id);
  }
}

/** 422 unless every column of a `search_index` can have a search index (event_message, STRING hot leaves). */
function checkSearchIndex(columns: readonly string[], leaves: readonly HotLeaf[]): void {
  const searchable = searchableColumns(leaves);
  const bad = columns.find((c) => !searchable.includes(c));
  if (bad === undefined) return;
  const message = `search_index: "${bad}" is neither event_message nor a STRING hot leaf of this source (possible: ${searchable.join(', ')}).`;
  throw new UnprocessableError(message, [{ domain: 'sources', reason: 'invalidSearchIndex', message, location: 'search_index' }]);
}

/** A table name for a new source that no source row or existing table uses yet. */
async function freeTableName(client: pg.PoolClient, name: string): Promise<string> {
  const base = tableNameForSource(name);
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? base : `${base}_${i}`;
    const { rows } = await client.query<{ taken: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM sources WHERE table_name = $1) OR to_regclass($2) IS NOT NULL AS taken',
      [candidate, `${LOG_SCHEMA}."${candidate}"`],
    );
    if (!rows[0].taken) return candidate;
  }
}

/** A table's partitions in the order the backfill takes them: newest first (the dashboard reads recent days most). */
export async function newestPartitionsFirst(pool: pg.Pool, table: string): Promise<string[]> {
  return (await listPartitions(pool, table)).map((p) => p.name).reverse();
}

/** A unique-name violation (23505) becomes 409; anything else passes through. */
function nameConflict(name: string) {
  return (err: Error & { code?: string }): never => {
    if (err.code === '23505') throw new ConflictError(`A source named "${name}" already exists.`);
    throw err;
  };
}
