/**
 * What runs in the background on every source's log tables (src/jobs.ts schedules it): partitions
 * kept ahead and dropped past retention, hot-leaf columns filled for rows older than their
 * declaration, and covering and search indexes brought to each source's settings. Idempotent and
 * safe on several replicas at once. Sources (src/sources/service.ts) own the rows and the catalog;
 * this reads the catalog and writes the hot-leaf progress back to the source rows.
 */
import type pg from 'pg';
import type { Database } from '../db/pool.js';
import { runBuilt, withTransaction } from '../db/transaction.js';
import { newestPartitionsFirst, PARTITION_DAYS_AHEAD, type SourceService } from '../sources/service.js';
import type { SourceRecord } from '../sources/repository.js';
import { backfillPartition, setUnknownLeafDefaults, uncheckedLeaves, type HotLeaf } from '../storage/hotLeaves.js';
import { checkPartition, forgetPartitionFacts, saveBackfilledFacts, unverifyFacts } from '../storage/hotLeafFacts.js';
import { upkeepIndexes } from '../storage/indexUpkeep.js';
import { dropExpiredPartitions, ensurePartitions, logTableName, partitionDay } from '../storage/logTables.js';
import type { HourlyStore } from '../query/hourlyStore.js';

const DAY_MS = 86_400_000;

export class SourceUpkeep {
  private readonly pool: pg.Pool;

  constructor(
    db: Pick<Database, 'pool'>,
    private readonly sources: Pick<SourceService, 'list' | 'reload' | 'repository'>,
    /** Where the hours of dropped partitions are reported (the hourly split's exact invalidation, src/query/hourlyStore.ts). */
    private readonly hourly?: Pick<HourlyStore, 'bumpDays'>,
  ) {
    this.pool = db.pool;
  }

  /**
   * Hot columns from before their facts were kept (src/storage/hotLeafFacts.ts) have no
   * UNKNOWN_LEAF_CODE default and unchecked rows: they get the default, and every partition is
   * listed as pending again, so the backfill checks (and fills, where needed) all their rows
   * before queries read the columns alone. Until then queries read them as before. At start-up.
   */
  async adoptUncheckedHotLeaves(): Promise<void> {
    let changed = false;
    for (const source of this.sources.list()) {
      // Without the default, or without facts (a start-up that stopped between the two steps below).
      const unchecked = await uncheckedLeaves(this.pool, source.table_name, source.hot_leaves ?? []);
      if (!unchecked.length) continue;
      await setUnknownLeafDefaults(this.pool, source.table_name, unchecked);
      const partitions = await newestPartitionsFirst(this.pool, source.table_name);
      await withTransaction(this.pool, async (client) => {
        const [row] = await runBuilt<SourceRecord>(client, this.sources.repository.lockQuery(source.id));
        if (!row?.hot_leaves) return;
        const paths = new Set(unchecked.map((l) => l.path));
        const states = row.hot_leaves.map((l) =>
          paths.has(l.path) ? { ...l, pending_partitions: [...new Set([...l.pending_partitions, ...partitions])] } : l,
        );
        await runBuilt(client, this.sources.repository.saveHotLeavesQuery(source.id, states));
        await unverifyFacts(client, source.table_name, [...paths]);
      });
      changed = true;
    }
    if (changed) await this.sources.reload();
  }

  /**
   * Fills the hot columns of rows written before their leaves were declared, one partition at a
   * time, newest first (the dashboard reads recent days most), marking each partition done in the
   * source row as it goes. Queries are right before, during and after: a NULL column is read from
   * the JSON (src/sql/resolve/hot.ts). Several replicas may run it; an UPDATE skips filled rows.
   * Returns the partitions filled.
   */
  async runHotLeafBackfill(): Promise<string[]> {
    // The catalog as loaded (the job runs after partition upkeep, which reloads it); each source's
    // pending list is read fresh from its row below.
    const done: string[] = [];
    for (const source of this.sources.list()) {
      for (;;) {
        const fresh = await this.sources.repository.find(source.id);
        const leaves = fresh?.hot_leaves ?? [];
        const partition = leaves.find((l) => l.pending_partitions.length)?.pending_partitions[0];
        if (!fresh || partition === undefined) break;
        const filling = leaves.filter((l) => l.pending_partitions.includes(partition));
        await backfillPartition(this.pool, partition, filling);
        // What the partition's rows show (values of another type, rows without the leaf): the
        // facts that decide whether queries may read the columns alone (src/storage/hotLeafFacts.ts).
        const facts = await checkPartition(this.pool, partition, filling);
        await withTransaction(this.pool, async (client) => {
          const [row] = await runBuilt<SourceRecord>(client, this.sources.repository.lockQuery(source.id));
          if (!row?.hot_leaves) return;
          // Only the leaves this run filled, as they were declared when it read them: a leaf
          // declared (or retyped) meanwhile has this partition still to fill and check.
          const filled = (l: HotLeaf) => filling.some((f) => f.path === l.path && f.type === l.type);
          const states = row.hot_leaves.map((l) =>
            filled(l) ? { ...l, pending_partitions: l.pending_partitions.filter((p) => p !== partition) } : l,
          );
          await runBuilt(client, this.sources.repository.saveHotLeavesQuery(source.id, states));
          const current = states.filter(filled);
          const complete = current.filter((l) => !l.pending_partitions.length).map((l) => l.path);
          await saveBackfilledFacts(
            client,
            source.table_name,
            facts.filter((f) => current.some((l) => l.path === f.path)),
            complete,
          );
        });
        done.push(partition);
      }
    }
    if (done.length) await this.sources.reload();
    return done;
  }

  /**
   * The indexes of every source brought to its hot leaves' (src/storage/indexUpkeep.ts): covering
   * indexes built partition by partition once a partition's backfill is done, the indexes they
   * replace dropped once they are valid. Every source is tried; the first failure is thrown after.
   * Returns what was done.
   */
  async runIndexUpkeep(): Promise<string[]> {
    const done: string[] = [];
    let failure: Error | undefined;
    for (const source of this.sources.list()) {
      try {
        done.push(...(await this.upkeepIndexesOf(source.id)));
      } catch (err) {
        failure ??= err as Error;
      }
    }
    if (failure) throw failure;
    return done;
  }

  /** One source's index upkeep, its leaves read fresh from its row; runs for one source follow each other in this process. */
  upkeepIndexesOf(sourceId: string): Promise<string[]> {
    const run = (this.indexRuns.get(sourceId) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        const row = await this.sources.repository.find(sourceId);
        return row ? upkeepIndexes(this.pool, row.table_name, row.hot_leaves ?? [], row.search_index) : [];
      });
    this.indexRuns.set(sourceId, run);
    void run.finally(() => this.indexRuns.get(sourceId) === run && this.indexRuns.delete(sourceId)).catch(() => undefined);
    return run;
  }
  private readonly indexRuns = new Map<string, Promise<string[]>>();

  /**
   * Background upkeep: partitions ahead for every source, and retention. A dropped day's hours get
   * new write versions right after the drop, as ingest's after its COMMIT, so no partial kept from
   * its rows is read again. (Why not have readers skip hours older than the retention instead:
   * each process would judge by its own copy of the catalog, reloaded every 10 s, while the drop is
   * another process's; the version tokens are the one thing every reader checks.)
   */
  async runPartitionUpkeep(nowMs = Date.now()): Promise<{ created: number; dropped: string[] }> {
    await this.sources.reload();
    let created = 0;
    const dropped: string[] = [];
    for (const source of this.sources.list()) {
      created += (await ensurePartitions(this.pool, source.table_name, nowMs, nowMs + PARTITION_DAYS_AHEAD * DAY_MS)).length;
      const expired = await dropExpiredPartitions(this.pool, source.table_name, source.retention_days, nowMs);
      await this.hourly?.bumpDays(
        logTableName(source.table_name),
        expired.map((name) => partitionDay(name)!),
      );
      await forgetPartitionFacts(this.pool, source.table_name, expired);
      dropped.push(...expired);
    }
    return { created, dropped };
  }
}
