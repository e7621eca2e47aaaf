import type { Knex } from 'knex';
import { isUuid } from '../ids.js';

export interface ParameterDeclaration {
  name: string;
  required: boolean;
  allowed_values?: string[] | null;
  description?: string;
}

export interface EndpointRecord {
  id: string;
  name: string;
  description: string;
  query: string;
  parameters: ParameterDeclaration[];
  max_rows: number;
  cache_duration_seconds: number;
  cache_warming_seconds: number | null;
  sandboxable: boolean;
  redact_pii: boolean;
  /** false: a public endpoint (docs/API.md, "Public endpoints"). */
  enable_auth: boolean;
  /** Always `bq_sql`; kept for the original service's clients, which send and read it. */
  language: string;
  labels: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** What a save writes; the original service's fields may be left to their column defaults (enabled auth, bq_sql, no labels). */
export type EndpointFields = Omit<EndpointRecord, 'id' | 'version' | 'created_at' | 'updated_at' | OriginalFields> &
  Partial<Pick<EndpointRecord, OriginalFields>>;
type OriginalFields = 'enable_auth' | 'language' | 'labels';

/** The `endpoints` table. Every update bumps `version`, which is part of every cache key. */
export class EndpointRepository {
  constructor(private readonly knex: Knex) {}

  list(): Promise<EndpointRecord[]> {
    return this.knex<EndpointRecord>('endpoints').select('*').orderBy('name');
  }

  /** A UUID selects by id, any other string by name. */
  find(idOrName: string): Promise<EndpointRecord | undefined> {
    return this.knex<EndpointRecord>('endpoints')
      .where(isUuid(idOrName) ? 'id' : 'name', idOrName)
      .first();
  }

  /** Endpoints with exactly these names (reading endpoints from endpoints, src/endpoints/nesting.ts). */
  findByNames(names: readonly string[]): Promise<EndpointRecord[]> {
    if (!names.length) return Promise.resolve([]);
    return this.knex<EndpointRecord>('endpoints')
      .whereIn('name', names as string[])
      .select('*');
  }

  async insert(fields: EndpointFields, id?: string): Promise<EndpointRecord> {
    const [row] = (await this.knex('endpoints')
      .insert({ ...toRow(fields), ...(id !== undefined && { id }) })
      .returning('*')) as EndpointRecord[];
    return row;
  }

  async update(id: string, fields: Partial<EndpointFields>): Promise<EndpointRecord | undefined> {
    const [row] = (await this.knex('endpoints')
      .where({ id })
      .update({ ...toRow(fields), version: this.knex.raw('version + 1'), updated_at: this.knex.fn.now() })
      .returning('*')) as EndpointRecord[];
    return row;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.knex('endpoints').where({ id }).delete()) > 0;
  }
}

function toRow(fields: Partial<EndpointFields>): Record<string, unknown> {
  const row: Record<string, unknown> = { ...fields };
  if (fields.parameters) row.parameters = JSON.stringify(fields.parameters);
  return row;
}
