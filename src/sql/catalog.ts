/**
 * The translator's input contract: what it must know about the log tables it reads, and
 * nothing else. The service's sources, storage and ingest fill it in (src/sources/service.ts
 * builds the lookup from the sources table) and import these definitions from here; the
 * translator (src/sql/) imports nothing from them, so it can be read and tested alone (lint
 * enforces it: eslint.config.js, "layers").
 *
 * A source is a table with four fixed columns, the jsonb columns `metadata` and `body` holding
 * an event's other fields in BigQuery's stored shape (every object a one-element array), an
 * inferred schema of those fields, and optionally hot leaves: JSON leaves also kept as columns
 * of their own, with facts (exact, dense) the translator asks Postgres about while planning.
 */

export type ScalarType = 'STRING' | 'INT64' | 'FLOAT64' | 'BOOL' | 'TIMESTAMP';
export type FieldType = ScalarType | 'RECORD';

export interface FieldSchema {
  readonly type: FieldType;
  /** An array in BigQuery terms. Records are always repeated in the stored shape. */
  readonly repeated: boolean;
  /** RECORD only: every value ever ingested was a single JSON object (stored as a one-element array). */
  readonly single?: boolean;
  /** RECORD only: its fields. */
  readonly fields?: Readonly<Record<string, FieldSchema>>;
}

/** Fields of a source below the top level columns, keyed by name (e.g. `metadata`). */
export type FieldMap = Readonly<Record<string, FieldSchema>>;

/** Physical columns every log table has; everything else of an event is under `body`. */
export const FIXED_COLUMNS = {
  id: { type: 'STRING', repeated: false },
  timestamp: { type: 'TIMESTAMP', repeated: false },
  event_message: { type: 'STRING', repeated: false },
  project: { type: 'STRING', repeated: false },
} as const satisfies Record<string, FieldSchema>;

export type FixedColumn = keyof typeof FIXED_COLUMNS;

/** Columns holding jsonb in the stored BigQuery shape: `metadata` is its own column, other top-level fields live in `body`. */
export const METADATA_COLUMN = 'metadata';
export const BODY_COLUMN = 'body';

/**
 * What the translator needs to know about a source: the name queries use, the table to read,
 * and the schema of its JSON fields (top-level fields other than the fixed columns, including `metadata`).
 */
export interface SourceTable {
  /** Name used in queries, e.g. `cloudflare.logs.prod`. */
  readonly name: string;
  /** The Postgres schema and table, already safe identifiers, e.g. { pgSchema: 'logs', table: 'cloudflare_logs_prod' } (not the field map: that is `fields`). */
  readonly pgSchema: string;
  readonly table: string;
  /** Inferred schema of the JSON fields, keyed by top-level field name (`metadata`, and others stored in `body`). */
  readonly fields: FieldMap;
  /** Hot leaves the table has as columns (below; maintained by src/storage/hotLeaves.ts): path → column type. */
  readonly hot?: readonly HotLeaf[];
}

export type SourceLookup = (name: string) => SourceTable | undefined;

/** Widen two observations of one field into one: INT64+FLOAT64 → FLOAT64, scalar clashes → STRING. */
export function mergeField(a: FieldSchema | undefined, b: FieldSchema | undefined): FieldSchema | undefined {
  if (!a) return b;
  if (!b) return a;
  if (a.type === 'RECORD' && b.type === 'RECORD') {
    return {
      type: 'RECORD',
      repeated: true,
      single: Boolean(a.single && b.single),
      fields: mergeFieldMaps(a.fields ?? {}, b.fields ?? {}),
    };
  }
  if (a.type === 'RECORD' || b.type === 'RECORD') return a.type === 'RECORD' ? a : b; // a record wins over a stray scalar
  const repeated = a.repeated || b.repeated;
  if (a.type === b.type) return a.repeated === repeated ? a : { type: a.type, repeated };
  const numeric = new Set<FieldType>(['INT64', 'FLOAT64']);
  if (numeric.has(a.type) && numeric.has(b.type)) return { type: 'FLOAT64', repeated };
  return { type: 'STRING', repeated };
}

export function mergeFieldMaps(a: FieldMap, b: FieldMap): FieldMap {
  const out: Record<string, FieldSchema> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = mergeField(out[k], v)!;
  return out;
}

/** Types a hot column can have; TIMESTAMP leaves (JSON strings) are kept as their STRING text. */
export type HotLeafType = 'STRING' | 'INT64' | 'FLOAT64' | 'BOOL';
export const HOT_LEAF_TYPES: readonly HotLeafType[] = ['STRING', 'INT64', 'FLOAT64', 'BOOL'];

/** A declared hot leaf: `metadata.response.status_code` as an INT64 column. */
export interface HotLeaf {
  /** Dotted path from the event's top level; always under `metadata` (docs/API.md, "Hot leaves"). */
  readonly path: string;
  readonly type: HotLeafType;
  /** Which index of the log table INCLUDEs the leaf's column (src/storage/coveringIndexes.ts); absent: 'project'. */
  readonly index?: 'project' | 'timestamp' | 'both' | 'none';
}

/** The column of a hot leaf: its path, quoted (`"metadata.request.path"`), which no other column name can be. */
export function hotColumnName(path: string): string {
  return path;
}

/**
 * The facts as the translator's SQL asks them (migrations/1763810000000_hot-leaf-facts.js):
 * `logs.hot_leaf_exact(table, path)`, and `logs.hot_leaf_dense(table, path, depth)`, which is
 * exact and dense from `depth` down. IMMUTABLE, so the planner answers them while planning.
 */
export const HOT_LEAF_EXACT = 'logs.hot_leaf_exact';
export const HOT_LEAF_DENSE = 'logs.hot_leaf_dense';
