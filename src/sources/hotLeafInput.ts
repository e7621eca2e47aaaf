/**
 * The `hot_leaves` of a source as the management API takes them (docs/API.md, "Hot leaves"):
 * a list of `{"path": "metadata.request.path", "type": "STRING", "index": "both"}`, `type` optional
 * (the leaf's type in the source's schema, else STRING), `index` optional (which index INCLUDEs the
 * column, src/storage/coveringIndexes.ts; default 'project'). 422 naming the entry for anything else.
 */
import { UnprocessableError } from '../errors.js';
import { HOT_LEAF_INDEXES, type HotLeafIndex } from '../storage/coveringIndexes.js';
import { HOT_LEAF_TYPES, type HotLeaf, type HotLeafType } from '../storage/hotLeaves.js';
import type { FieldMap, FieldSchema } from './schema.js';

/** More columns than this make every row wider than the JSON reads they save. */
export const MAX_HOT_LEAVES = 16;
/** `metadata.` and at least a record and a leaf below it; each key as ingest stores keys. */
const PATH_RE = /^metadata(\.[A-Za-z_][A-Za-z0-9_]*){2,}$/;
/** Postgres identifiers are at most 63 bytes; the column is named by the path. */
const MAX_PATH_BYTES = 63;

function invalid(message: string, location: string): never {
  throw new UnprocessableError(message, [{ domain: 'sources', reason: 'invalidHotLeaves', message, location }]);
}

export function parseHotLeaves(value: unknown, schema: FieldMap): HotLeaf[] {
  if (!Array.isArray(value)) invalid('hot_leaves must be a list like [{"path": "metadata.request.path", "type": "STRING"}].', 'hot_leaves');
  if (value.length > MAX_HOT_LEAVES) invalid(`a source may have at most ${MAX_HOT_LEAVES} hot leaves.`, 'hot_leaves');
  const seen = new Set<string>();
  return value.map((entry: unknown, i): HotLeaf => {
    const at = `hot_leaves[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) invalid(`${at} must be an object with a path.`, at);
    const { path, type, index, ...rest } = entry as Record<string, unknown>;
    const extra = Object.keys(rest).filter((k) => k !== 'pending_partitions' && k !== 'backfill'); // read-only, sent back from a GET
    if (extra.length) invalid(`${at} has an unknown field "${extra[0]}": a hot leaf has path, type and index.`, `${at}.${extra[0]}`);
    if (typeof path !== 'string' || !PATH_RE.test(path) || Buffer.byteLength(path) > MAX_PATH_BYTES)
      invalid(
        `${at}.path must be a leaf below metadata in dotted form, like "metadata.request.path" (at most ${MAX_PATH_BYTES} characters).`,
        `${at}.path`,
      );
    if (seen.has(path)) invalid(`${at}.path ${path} is listed twice.`, `${at}.path`);
    seen.add(path);
    const known = schemaField(schema, path, at);
    if (type !== undefined && (typeof type !== 'string' || !HOT_LEAF_TYPES.includes(type as HotLeafType)))
      invalid(`${at}.type must be one of ${HOT_LEAF_TYPES.join(', ')}.`, `${at}.type`);
    const inferred =
      known && known.type !== 'RECORD' && HOT_LEAF_TYPES.includes(known.type as HotLeafType) ? (known.type as HotLeafType) : 'STRING';
    if (index !== undefined && (typeof index !== 'string' || !HOT_LEAF_INDEXES.includes(index as HotLeafIndex)))
      invalid(`${at}.index must be one of ${HOT_LEAF_INDEXES.join(', ')}.`, `${at}.index`);
    return { path, type: (type as HotLeafType | undefined) ?? inferred, index: (index as HotLeafIndex | undefined) ?? 'project' };
  });
}

/**
 * The schema's field at `path`, if the schema knows it. A path through a record that is not
 * single (an array of several objects) or to a record or repeated field is refused: the
 * translator never reads such a leaf by path, so a column could never be used.
 */
function schemaField(schema: FieldMap, path: string, at: string): FieldSchema | undefined {
  const keys = path.split('.');
  let fields: FieldMap | undefined = schema;
  let field: FieldSchema | undefined;
  for (let i = 0; i < keys.length; i++) {
    field = fields?.[keys[i]];
    if (!field) return undefined;
    const last = i === keys.length - 1;
    if (!last && (field.type !== 'RECORD' || field.single !== true))
      invalid(
        `${at}.path ${path}: ${keys.slice(0, i + 1).join('.')} is not a single record, so its leaves are not read by path.`,
        `${at}.path`,
      );
    if (last && (field.type === 'RECORD' || field.repeated))
      invalid(`${at}.path ${path} is not a single value (a record or an array).`, `${at}.path`);
    fields = field.fields;
  }
  return field;
}
