import type { Knex } from 'knex';
import type { FieldMap } from './schema.js';
import type { HotLeafState } from '../storage/hotLeaves.js';
import { isUuid } from '../ids.js';

export interface SourceRecord {
  id: string;
  name: string;
  table_name: string;
  retention_days: number;
  schema: FieldMap;
  /** Hot leaves kept as columns, with the partitions their backfill has still to fill (storage/hotLeaves.ts); null: never configured. */
  hot_leaves: HotLeafState[] | null;
  /** The text columns with a trigram search index (`event_message`, STRING hot leaves' paths): src/storage/searchIndexes.ts. */
  search_index: string[];
  created_at: Date;
  updated_at: Date;
}

/** A row of `search_common_trigrams` (migrations/1764900000000_search-common-trigrams.js). */
export interface CommonTrigramsRecord {
  table_name: string;
  column_name: string;
  partition: string;
  trigrams: string[];
  /** The rare-trigram index function of the frozen set (src/sql/catalog.ts rareTrigramsFunction), qualified; null while not frozen. */
  index_function: string | null;
}

export class SourceRepository {
  constructor(private readonly knex: Knex) {}

  list(): Promise<SourceRecord[]> {
    return this.knex<SourceRecord>('sources').select('*').orderBy('name');
  }

  /** The common trigrams of every log table's searched columns (src/storage/commonTrigrams.ts). */
  async listCommonTrigrams(): Promise<CommonTrigramsRecord[]> {
    // A function that went missing (the upkeep creates it again) is not handed over: searches would fail on it meanwhile.
    const { rows } = await this.knex.raw<{ rows: CommonTrigramsRecord[] }>(
      `SELECT table_name, column_name, partition, trigrams,
              CASE WHEN to_regprocedure(index_function || '(text)') IS NOT NULL THEN index_function END AS index_function
         FROM search_common_trigrams ORDER BY table_name, column_name`,
    );
    return rows;
  }

  async find(idOrName: string): Promise<SourceRecord | undefined> {
    const column = isUuid(idOrName) ? 'id' : 'name';
    return this.knex<SourceRecord>('sources').where(column, idOrName).first();
  }

  insertQuery(row: {
    id?: string;
    name: string;
    table_name: string;
    retention_days: number;
    schema?: string;
    hot_leaves?: string;
  }): Knex.QueryBuilder {
    return this.knex('sources').insert(row).returning('*');
  }

  async update(id: string, patch: Partial<Pick<SourceRecord, 'name' | 'retention_days'>>): Promise<SourceRecord | undefined> {
    const [row] = await this.knex<SourceRecord>('sources')
      .where({ id })
      .update({ ...patch, updated_at: this.knex.fn.now() as unknown as Date })
      .returning('*');
    return row;
  }

  deleteQuery(id: string): Knex.QueryBuilder {
    return this.knex('sources').where({ id }).delete();
  }

  /** The row, locked until the caller's transaction ends (schema merges must not lose fields). */
  lockQuery(id: string): Knex.QueryBuilder {
    return this.knex('sources').where({ id }).forUpdate().select('*');
  }

  /** Saves the hot leaves; bumps updated_at, so every replica's catalog (and translation cache) sees the change. */
  saveHotLeavesQuery(id: string, leaves: readonly HotLeafState[]): Knex.QueryBuilder {
    return this.knex('sources')
      .where({ id })
      .update({ hot_leaves: JSON.stringify(leaves), updated_at: this.knex.fn.now() });
  }

  /** Saves the search index columns, deduplicated; bumps updated_at like every setting. */
  async saveSearchIndex(id: string, columns: readonly string[]): Promise<void> {
    await this.knex('sources')
      .where({ id })
      .update({ search_index: JSON.stringify([...new Set(columns)]), updated_at: this.knex.fn.now() });
  }

  saveSchemaQuery(id: string, schema: FieldMap): Knex.QueryBuilder {
    return this.knex('sources')
      .where({ id })
      .update({ schema: JSON.stringify(schema), updated_at: this.knex.fn.now() });
  }
}
