/**
 * The inferred schema of a log source, in BigQuery terms.
 *
 * Ingest stores every JSON object as a one-element array (BigQuery's repeated record shape),
 * so `metadata` is `[{"request": [{"path": "/rest/v1"}]}]`. The schema remembers, per field,
 * whether a record was always written from a single object (`single: true`): then the
 * translator may read `metadata->0->'request'->0->>'path'` instead of unnesting, which is
 * 4–10× faster (docs/ARCHITECTURE.md, "Measured facts behind the design"), and still gives
 * the same rows.
 */
import { storedNames } from './shape.js';
import { mergeField, mergeFieldMaps, type FieldMap, type FieldSchema, type ScalarType } from '../sql/catalog.js';

// The translator's contract (src/sql/catalog.ts) defines sources' tables and field types; the
// service's modules keep importing them from here too.
export {
  BODY_COLUMN,
  FIXED_COLUMNS,
  METADATA_COLUMN,
  mergeField,
  mergeFieldMaps,
  type FieldMap,
  type FieldSchema,
  type FieldType,
  type FixedColumn,
  type ScalarType,
  type SourceLookup,
  type SourceTable,
} from '../sql/catalog.js';

/** The type of a JSON value as ingest sees it. */
export function inferField(value: unknown): FieldSchema | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    let element: FieldSchema | undefined;
    for (const item of value) element = mergeField(element, inferField(item));
    if (!element) return { type: 'STRING', repeated: true };
    if (element.type === 'RECORD') return { type: 'RECORD', repeated: true, single: false, fields: element.fields ?? {} };
    return { type: element.type, repeated: true };
  }
  switch (typeof value) {
    case 'string':
      return { type: 'STRING', repeated: false };
    case 'boolean':
      return { type: 'BOOL', repeated: false };
    case 'number':
      return { type: Number.isInteger(value) ? 'INT64' : 'FLOAT64', repeated: false };
    case 'object': {
      const fields: Record<string, FieldSchema> = {};
      const object = value as Record<string, unknown>;
      const keys = Object.keys(object);
      const names = storedNames(keys);
      for (let i = 0; i < keys.length; i++) {
        const f = inferField(object[keys[i]]);
        if (f) fields[names[i]] = f;
      }
      return { type: 'RECORD', repeated: true, single: true, fields };
    }
    default:
      return undefined;
  }
}

/**
 * A field map from dotted paths and BigQuery types, e.g. `{"metadata.request.path": "STRING",
 * "metadata.context.mfa": "ARRAY<STRING>"}`: every prefix is a record written from one object
 * (`single`), as ingest stores a nested object.
 */
export function fieldMapFromPaths(paths: Readonly<Record<string, string>>): FieldMap {
  let map: FieldMap = {};
  for (const [path, type] of Object.entries(paths)) {
    const repeated = type.startsWith('ARRAY<');
    const name = (repeated ? type.slice(6, -1) : type) as ScalarType;
    let field: FieldSchema = { type: name, repeated };
    const parts = path.split('.');
    for (let i = parts.length - 1; i > 0; i--) field = { type: 'RECORD', repeated: true, single: true, fields: { [parts[i]]: field } };
    map = mergeFieldMaps(map, { [parts[0]]: field });
  }
  return map;
}

/**
 * `base` with the fields of `over` laid on top: where both have a field, `over`'s type wins
 * (records are laid over field by field). For a schema that is known better than one sample
 * shows it; ingest itself merges (mergeFieldMaps), widening on a clash.
 */
export function overlayFieldMaps(base: FieldMap, over: FieldMap): FieldMap {
  const out: Record<string, FieldSchema> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      b?.type === 'RECORD' && v.type === 'RECORD'
        ? { ...v, single: Boolean(b.single && v.single), fields: overlayFieldMaps(b.fields ?? {}, v.fields ?? {}) }
        : v;
  }
  return out;
}

/**
 * True when merging `seen` into `schema` changes nothing (so ingest can skip the schema write).
 * Compares structure, not JSON text: a schema read back from jsonb has its keys in jsonb's
 * order, so a text comparison would never match and every batch would rewrite the schema.
 */
export function fieldMapCovers(schema: FieldMap, seen: FieldMap): boolean {
  for (const key in seen) if (!(key in schema)) return false;
  return sameFieldMap(mergeFieldMaps(schema, seen), schema);
}

function sameFieldMap(a: FieldMap, b: FieldMap): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const k of keys) {
    const x = a[k],
      y = b[k];
    if (!x || !y || !sameField(x, y)) return false;
  }
  return true;
}

function sameField(a: FieldSchema, b: FieldSchema): boolean {
  if (a.type !== b.type || a.repeated !== b.repeated || Boolean(a.single) !== Boolean(b.single)) return false;
  return a.type !== 'RECORD' || sameFieldMap(a.fields ?? {}, b.fields ?? {});
}

/** Table name for a source name: `cloudflare.logs.prod` → `cloudflare_logs_prod`, `postgREST.logs.prod` → `postgrest_logs_prod`. */
export function tableNameForSource(name: string): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'source';
  const prefixed = (/^[a-z_]/.test(base) ? base : `s_${base}`).slice(0, 48);
  // security: partitions are named `<table>_pYYYYMMDD` (src/storage/logTables.ts); a source table
  // of that form took a future partition's name (`postgres.logs_p20261120`), and from that day
  // every batch of `postgres.logs` failed with a 500 (issue 25, finding 6). Never that form.
  return PARTITION_SUFFIX.test(prefixed) ? `${prefixed}_s` : prefixed;
}

/** The end of a partition's name; no source table ends so. */
const PARTITION_SUFFIX = /_p\d{8}$/;
