/**
 * API keys. A key is 32 random bytes (base64url); only its SHA-256 is stored, with a short
 * prefix for telling keys apart in listings. SHA-256 rather than a slow password hash because
 * generated keys carry 256 bits of entropy (nothing to brute-force) and every request checks one.
 * Bootstrap keys from the environment must be at least 16 characters (config.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Scope } from '../config.js';
import { isUuid } from '../ids.js';
import { LIMIT_FIELDS, type KeyLimitFields } from './keyLimits.js';
import type { KeyScope } from './scopes.js';

export const SCOPES: readonly Scope[] = ['query', 'ingest', 'admin'];

export interface ApiKeyRecord extends KeyLimitFields {
  id: string;
  name: string;
  prefix: string;
  /** Broad scopes and scopes limited to one endpoint or source (src/auth/scopes.ts). */
  scopes: KeyScope[];
  created_at: Date;
}

const COLUMNS = ['id', 'name', 'prefix', 'scopes', 'created_at', ...LIMIT_FIELDS];

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function generateKey(): string {
  return 'lq_' + randomBytes(32).toString('base64url');
}

export class ApiKeyRepository {
  constructor(private readonly knex: Knex) {}

  /** Stores a key (hashed) and returns its record; the key itself is not kept. */
  async create(name: string, key: string, scopes: KeyScope[], limits: Partial<KeyLimitFields> = {}): Promise<ApiKeyRecord> {
    const [row] = await this.knex('api_keys')
      .insert({ name, key_hash: hashKey(key), prefix: key.slice(0, 6), scopes, ...limits })
      .returning<ApiKeyRecord[]>(COLUMNS);
    return row;
  }

  /** Sets (a number) or resets to the configured default (null) the limits given; undefined for an unknown id. */
  async setLimits(id: string, limits: Partial<KeyLimitFields>): Promise<ApiKeyRecord | undefined> {
    if (!isUuid(id)) return undefined;
    if (Object.keys(limits).length === 0) return this.knex('api_keys').where({ id }).first(COLUMNS);
    const [row] = await this.knex('api_keys').where({ id }).update(limits).returning<ApiKeyRecord[]>(COLUMNS);
    return row;
  }

  /**
   * Stores a key that exists elsewhere already (an access token of the original, imported:
   * src/import/logflare/catalog.ts), hashed like every key. False when it is registered already.
   */
  async adopt(name: string, key: string, scopes: KeyScope[]): Promise<boolean> {
    const rows = await this.knex('api_keys')
      .insert({ name, key_hash: hashKey(key), prefix: key.slice(0, 6), scopes })
      .onConflict('key_hash')
      .ignore()
      .returning('id');
    return rows.length > 0;
  }

  /** Registers a bootstrap key, or updates the scopes of one already registered. */
  async upsert(name: string, key: string, scopes: Scope[]): Promise<void> {
    await this.knex('api_keys')
      .insert({ name, key_hash: hashKey(key), prefix: key.slice(0, 6), scopes })
      .onConflict('key_hash')
      .merge(['name', 'scopes']);
  }

  async findByKey(key: string): Promise<ApiKeyRecord | undefined> {
    return this.knex('api_keys')
      .where({ key_hash: hashKey(key) })
      .first(COLUMNS);
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.knex('api_keys').select(COLUMNS).orderBy('created_at');
  }

  /** True when the key itself (not its id: the original service revokes access tokens by token) was deleted. */
  async deleteByKey(key: string): Promise<boolean> {
    return (
      (await this.knex('api_keys')
        .where({ key_hash: hashKey(key) })
        .delete()) > 0
    );
  }

  /** True when a key was deleted; false for an unknown id, or one that is not a UUID. */
  async delete(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return (await this.knex('api_keys').where({ id }).delete()) > 0;
  }
}
