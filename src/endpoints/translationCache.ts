/**
 * Translations by endpoint version, source catalog version and caller `sql`: a translation is a
 * pure function of those, so it is reused until the cache needs the room. Bounded by bytes, not
 * entries: a caller's `sql` may be up to MAX_QUERY_BYTES and its translation larger, so a count bound
 * would let a stream of distinct large `sql` values hold hundreds of megabytes.
 */
import { LRUCache } from 'lru-cache';
import { MAX_QUERY_BYTES } from '../inputLimits.js';
import type { Translation } from '../sql/index.js';

/** The longest key cached: the id and versions, and a caller `sql` of up to MAX_QUERY_BYTES. */
export const TRANSLATION_MAX_KEY_BYTES = MAX_QUERY_BYTES + 256;
/** The largest translation cached (its SQL text and columns). */
export const TRANSLATION_MAX_VALUE_BYTES = 1024 * 1024;
const TRANSLATION_MAX_BYTES = 32 * 1024 * 1024;

export function translationKey(
  endpointId: string,
  version: number,
  catalogVersion: number,
  sandboxSql: string | undefined,
  lql?: string,
): string {
  return lql === undefined
    ? `${endpointId}:${version}:${catalogVersion}:${sandboxSql ?? ''}`
    : `${endpointId}:${version}:${catalogVersion}:lql:${lql}`;
}

/**
 * What a translation holds on to, about: its SQL text, its column names and types, and the tree the
 * SQL was printed from (kept for the hourly split, src/query/hourlySplit.ts): JS objects of a few
 * dozen bytes per node, about TREE_BYTES_PER_SQL_BYTE times the printed text.
 */
export function translationBytes(translation: Translation): number {
  let bytes = Buffer.byteLength(translation.sql) * (translation.tree ? 1 + TREE_BYTES_PER_SQL_BYTE : 1);
  for (const c of translation.columns) bytes += Buffer.byteLength(c.name) + c.type.length;
  return bytes;
}

const TREE_BYTES_PER_SQL_BYTE = 4;

export class TranslationCache {
  private readonly entries: LRUCache<string, Translation>;

  constructor(maxBytes = TRANSLATION_MAX_BYTES) {
    this.entries = new LRUCache({ maxSize: maxBytes });
  }

  /** Bytes held: keys and values as counted against the budget (for tests and diagnostics). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  get(key: string): Translation | undefined {
    return this.entries.get(key);
  }

  /** Keeps a translation unless its key or its value alone is past its limit; its size is the key's bytes and the value's. */
  set(key: string, translation: Translation): void {
    const keyBytes = Buffer.byteLength(key);
    const valueBytes = translationBytes(translation);
    if (keyBytes > TRANSLATION_MAX_KEY_BYTES || valueBytes > TRANSLATION_MAX_VALUE_BYTES) return;
    this.entries.set(key, translation, { size: keyBytes + valueBytes });
  }
}
