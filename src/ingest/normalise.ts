/**
 * Turns posted events into rows of a log table: fixed columns, `metadata` and `body`
 * in the stored BigQuery shape, and the schema they imply.
 */
import { randomUUID } from 'node:crypto';
import { FIXED_COLUMNS, inferField, mergeField, type FieldMap, type FieldType } from '../sources/schema.js';
import { fieldName, isPlainObject, toStoredShape } from './shape.js';
import { MAX_NESTING, unstorableReason } from './storable.js';
import { parseEventTimestamp } from './timestamp.js';

export interface LogRow {
  id: string;
  /** Microseconds since the epoch. */
  micros: bigint;
  event_message: string | null;
  project: string | null;
  metadata: unknown;
  body: Record<string, unknown> | null;
}

export interface EventError {
  index: number;
  message: string;
}

export interface NormalisedBatch {
  rows: LogRow[];
  fields: FieldMap;
  errors: EventError[];
  /** Checking stopped at MAX_COLLECTED_ERRORS invalid events; later events were not looked at. */
  errorsTruncated?: boolean;
}

/**
 * Checking stops after this many invalid events: the batch is rejected whole anyway, and a body
 * of millions of tiny invalid events (`[1,1,1,…]`, 8 MB) otherwise held the event loop for
 * seconds and built ~200 MB of error objects (test/hardening/bad-input.test.ts).
 */
export const MAX_COLLECTED_ERRORS = 1000;

const MAX_FUTURE_MS = 24 * 3_600_000;
/** Top-level keys that are not stored in `body`. */
const OWN_KEYS = new Set(['id', 'timestamp', 'event_message', 'message', 'project', 'metadata']);

export interface NormaliseOptions {
  nowMs: number;
  retentionDays: number;
  /**
   * Look for strings Postgres cannot store (NUL, lone surrogates) in every string value.
   * Default true. The ingest route passes false when a scan of the raw body found no `\u0000`
   * or `\ud800`-`\udfff` escape, the only ways such characters can arrive in JSON text.
   */
  checkStrings?: boolean;
  /**
   * The events are the caller's to give away (freshly parsed from a request body): records are
   * then reshaped in place instead of copied, which saves most of the allocation. Default false.
   */
  reuseInput?: boolean;
}

/**
 * Validates events and turns them into rows in the stored shape, with the schema they imply.
 * One walk per event does three things at once (measured: 3× faster than separate passes):
 * builds the stored value (`toStoredShape`), merges each value's type into one mutable schema
 * for the batch (the same result as `inferField` + `mergeFieldMaps`, without a tree per event),
 * and rejects what Postgres cannot store (storable.ts).
 */
export function normaliseEvents(events: unknown[], options: NormaliseOptions): NormalisedBatch {
  const rows: LogRow[] = [];
  const errors: EventError[] = [];
  const schema: Record<string, MutableField> = {};
  const walker = new Walker(options.checkStrings ?? true, options.reuseInput ?? false);
  const oldestMs = options.nowMs - options.retentionDays * 86_400_000;

  for (let index = 0; index < events.length; index++) {
    if (errors.length >= MAX_COLLECTED_ERRORS) return { rows, fields: schema as FieldMap, errors, errorsTruncated: true };
    const event = events[index];
    const fail = (message: string) => void errors.push({ index, message });
    if (!isPlainObject(event)) {
      fail('an event must be a JSON object');
      continue;
    }

    let id: string;
    if (event.id === undefined || event.id === null) id = randomUUID();
    else if ((typeof event.id === 'string' && event.id.length > 0 && event.id.length <= 200) || typeof event.id === 'number') id = String(event.id);
    else {
      fail('id must be a non-empty string of at most 200 characters');
      continue;
    }

    let micros: bigint;
    if (event.timestamp === undefined || event.timestamp === null) micros = BigInt(options.nowMs) * 1000n;
    else {
      const parsed = parseEventTimestamp(event.timestamp);
      if ('error' in parsed) {
        fail(parsed.error);
        continue;
      }
      micros = parsed.micros;
    }
    const ms = Number(micros / 1000n);
    if (ms > options.nowMs + MAX_FUTURE_MS) {
      fail('timestamp is more than 24 hours in the future');
      continue;
    }
    if (ms < oldestMs) {
      fail(`timestamp is older than the source's retention of ${options.retentionDays} days`);
      continue;
    }

    const message = event.event_message ?? event.message;
    if (message !== undefined && message !== null && typeof message !== 'string') {
      fail('event_message must be a string');
      continue;
    }
    if (event.project !== undefined && event.project !== null && typeof event.project !== 'string') {
      fail('project must be a string');
      continue;
    }
    if (event.metadata !== undefined && event.metadata !== null && !isPlainObject(event.metadata) && !Array.isArray(event.metadata)) {
      fail('metadata must be an object or an array of objects');
      continue;
    }
    const textProblem = walker.checkStrings ? unstorableReason([id, message ?? null, event.project ?? null]) : undefined;
    if (textProblem) {
      fail(`the event ${textProblem}`);
      continue;
    }

    walker.problem = undefined;
    let metadata: unknown = null;
    if (event.metadata !== undefined && event.metadata !== null) {
      metadata = walker.stored(event.metadata, 'metadata', schema, 1);
    }
    let body: Record<string, unknown> | null = null;
    for (const key in event) {
      if (OWN_KEYS.has(key)) continue;
      const name = fieldName(key);
      if (OWN_KEYS.has(name) || name in FIXED_COLUMNS) continue; // e.g. "event-message": would shadow a column
      body ??= {};
      body[name] = walker.stored(event[key], name, schema, 1);
    }
    if (walker.problem) {
      fail(`the event ${walker.problem}`);
      continue;
    }

    rows.push({
      id,
      micros,
      event_message: (message as string | null | undefined) ?? null,
      project: (event.project as string | null | undefined) ?? null,
      metadata,
      body,
    });
  }

  return { rows, fields: schema as FieldMap, errors };
}

/** A FieldSchema the walk may change in place (all of them are created by this batch's walk). */
interface MutableField {
  type: FieldType;
  repeated: boolean;
  single?: boolean;
  fields?: Record<string, MutableField>;
}

class Walker {
  /** The first reason the current event cannot be stored. */
  problem: string | undefined;
  private readonly names = new Map<string, string>();

  constructor(readonly checkStrings: boolean, private readonly inPlace: boolean) {}

  /**
   * The stored shape of `value` (objects become one-element arrays), its type merged into
   * `parent[key]`. Same results as toStoredShape / inferField / mergeField, in one pass.
   */
  stored(value: unknown, key: string, parent: Record<string, MutableField>, depth: number): unknown {
    if (value === null || value === undefined) return value;
    const acc = parent[key];
    switch (typeof value) {
      case 'string':
        if (this.checkStrings && !this.problem) this.problem = unstorableReason(value);
        if (acc === undefined) parent[key] = { type: 'STRING', repeated: false };
        else if (acc.type !== 'STRING' && acc.type !== 'RECORD') parent[key] = { type: 'STRING', repeated: acc.repeated };
        return value;
      case 'number': {
        const type = Number.isInteger(value) ? 'INT64' : 'FLOAT64';
        if (acc === undefined) parent[key] = { type, repeated: false };
        else if (acc.type !== type && acc.type !== 'RECORD') {
          const numeric = acc.type === 'INT64' || acc.type === 'FLOAT64';
          parent[key] = { type: numeric ? 'FLOAT64' : 'STRING', repeated: acc.repeated };
        }
        return value;
      }
      case 'boolean':
        if (acc === undefined) parent[key] = { type: 'BOOL', repeated: false };
        else if (acc.type !== 'BOOL' && acc.type !== 'RECORD') parent[key] = { type: 'STRING', repeated: acc.repeated };
        return value;
      case 'object':
        break;
      default:
        return value;
    }
    if (depth > MAX_NESTING) {
      this.problem ??= `is nested more than ${MAX_NESTING} levels deep`;
      return null;
    }
    if (Array.isArray(value)) {
      // Rare in logs: the general functions, then the same checks.
      if (!this.problem) this.problem = unstorableReason(value, depth);
      if (this.problem) return null;
      parent[key] = mergeField(acc, inferField(value)) as MutableField;
      return toStoredShape(value);
    }
    let record = acc;
    if (record === undefined || record.type !== 'RECORD') {
      record = { type: 'RECORD', repeated: true, single: true, fields: {} }; // a record wins over a scalar
      parent[key] = record;
    }
    const fields = (record.fields ??= {});
    const object = value as Record<string, unknown>;
    if (this.inPlace && this.keysKept(object)) {
      for (const k in object) object[k] = this.stored(object[k], k, fields, depth + 1);
      return [object];
    }
    const out: Record<string, unknown> = {};
    for (const k in object) {
      const name = this.fieldName(k);
      out[name] = this.stored(object[k], name, fields, depth + 1);
    }
    return [out];
  }

  /** True when every key is stored as it is (the common case), so the object can be reused. */
  private keysKept(object: Record<string, unknown>): boolean {
    for (const k in object) if (this.fieldName(k) !== k) return false;
    return true;
  }

  private fieldName(key: string): string {
    let name = this.names.get(key);
    if (name === undefined) {
      name = fieldName(key);
      if (this.names.size < 10_000) this.names.set(key, name);
    }
    return name;
  }
}
