/**
 * Writes one batch of normalised rows: partitions first (idempotent DDL, outside the
 * transaction so it does not hold a lock on the parent table while rows are written), then
 * rows and the merged schema in one transaction. The caller answers 200 only after this
 * resolves, i.e. after COMMIT: an acknowledged batch is durable, a failed one left nothing.
 */
import type pg from 'pg';
import { withTransaction } from '../db/transaction.js';
import type { SourceRecord } from '../sources/repository.js';
import type { SourceService } from '../sources/service.js';
import type { FieldMap } from '../sources/schema.js';
import { dayStart, ensurePartitions, qualifiedTable } from '../storage/logTables.js';
import type { LogRow } from './normalise.js';
import { microsToIso } from './timestamp.js';

export class LogWriter {
  /** `table:dayMs` of partitions known to exist, so the hot path skips DDL. */
  private readonly knownPartitions = new Set<string>();

  constructor(private readonly pool: pg.Pool, private readonly sources: SourceService) {}

  async write(source: SourceRecord, rows: LogRow[], fields: FieldMap): Promise<void> {
    if (rows.length === 0) return;
    await this.ensurePartitionsFor(source.table_name, rows);
    const changed = await withTransaction(this.pool, async (client) => {
      await insertRows(client, source.table_name, rows);
      return this.sources.mergeSchema(client, source.id, fields);
    });
    if (changed) await this.sources.reload();
  }

  /** Forget cached partitions of a table (after retention dropped some, or the table was recreated). */
  forgetPartitions(): void {
    this.knownPartitions.clear();
  }

  private async ensurePartitionsFor(table: string, rows: LogRow[]): Promise<void> {
    const days = new Set<number>();
    for (const row of rows) days.add(dayStart(Number(row.micros / 1000n)));
    for (const day of days) {
      const key = `${table}:${day}`;
      if (this.knownPartitions.has(key)) continue;
      await ensurePartitions(this.pool, table, day, day);
      this.knownPartitions.add(key);
    }
  }
}

/**
 * One INSERT for the whole batch: six array parameters unnested server-side. The statement
 * text is the same for every batch size, and the row count is limited only by the body limit.
 */
export async function insertRows(client: Pick<pg.PoolClient, 'query'>, table: string, rows: LogRow[]): Promise<void> {
  const ids: string[] = [], timestamps: string[] = [], messages: (string | null)[] = [], projects: (string | null)[] = [];
  const metadata: (string | null)[] = [], bodies: (string | null)[] = [];
  for (const r of rows) {
    ids.push(r.id);
    timestamps.push(microsToIso(r.micros));
    messages.push(r.event_message);
    projects.push(r.project);
    metadata.push(r.metadata === null ? null : JSON.stringify(r.metadata));
    bodies.push(r.body === null ? null : JSON.stringify(r.body));
  }
  await client.query(
    `INSERT INTO ${qualifiedTable(table)} (id, "timestamp", event_message, project, metadata, body)
     SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[])`,
    [ids, timestamps, messages, projects, metadata, bodies],
  );
}
