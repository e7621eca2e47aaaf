/**
 * Turns posted events into rows of a log table: fixed columns, `metadata` and `body`
 * in the stored BigQuery shape, and the schema they imply.
 */
import { randomUUID } from 'node:crypto';
import { inferField, mergeField, type FieldMap, type FieldType } from '../sources/schema.js';
import { MAX_FIELDS_PER_SOURCE } from '../inputLimits.js';
import { fieldName, isPlainObject, setOwn, storedNames, toStoredShape } from '../sources/shape.js';
import { MAX_NESTING, numberProblem, unstorableReason } from './storable.js';
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

/** Why a valid event was dropped instead of stored: past its source's retention, or too far ahead. */
export type DropReason = 'stale' | 'future';

export interface NormalisedBatch {
  /** The valid events, in the order sent. */
  rows: LogRow[];
  /** The schema of `rows` (never of a rejected event). */
  fields: FieldMap;
  /** The first MAX_LISTED_ERRORS invalid events, by index. */
  errors: EventError[];
  /** How many events were invalid; `errors` lists at most MAX_LISTED_ERRORS of them. */
  rejected: number;
  /** Valid events not stored because of their timestamp, by reason. */
  dropped: Record<DropReason, number>;
}

/**
 * Invalid events listed one by one, at most. The rest are counted: a body of millions of tiny
 * invalid events (`[1,1,1,…]`, 8 MB) would otherwise build ~200 MB of error objects and an
 * answer of hundreds of megabytes (test/hardening/bad-input.test.ts).
 */
export const MAX_LISTED_ERRORS = 1000;

/** Clock skew tolerated: an event more than this ahead of the service's clock is dropped. */
export const MAX_FUTURE_MS = 3_600_000;
/** Top-level keys that are columns of their own, never stored in `body`. */
const COLUMN_KEYS = new Set(['id', 'timestamp', 'event_message', 'project', 'metadata']);
/** Also reserved when `message` is the event message (no `event_message`). */
const COLUMN_KEYS_AND_MESSAGE = new Set([...COLUMN_KEYS, 'message']);

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
  /** Slots of events that could not even be parsed (NDJSON lines), with the reason. */
  unparsed?: ReadonlyMap<number, string>;
  /**
   * The source's schema as it is: an event that would take it past MAX_FIELDS_PER_SOURCE fields
   * is invalid (listed in the 406), the others are stored. Without it, no cap (seeds, tests).
   */
  schema?: FieldMap;
  /**
   * Keep events whatever their timestamp: no drop past the retention or ahead of the clock. For
   * the importer only (src/import/logflare/events.ts): events an install of the original already
   * stored are carried over as they are; retention then treats them like any other.
   */
  keepAnyTimestamp?: boolean;
}

/**
 * Validates events one by one and turns the valid ones into rows in the stored shape, with the
 * schema they imply; invalid events are reported by index and cost the others nothing.
 * One walk per event does three things at once (each pass would walk the whole tree again):
 * builds the stored value (`toStoredShape`), merges each value's type into one mutable schema
 * for the batch (the same result as `inferField` + `mergeFieldMaps`, without a tree per event),
 * and rejects what Postgres cannot store (storable.ts). When the walk finds an event invalid,
 * the schema changes it made are undone (Walker.journal), so `fields` describes `rows` only.
 */
export function normaliseEvents(events: unknown[], options: NormaliseOptions): NormalisedBatch {
  const batch = batchNormaliser(events, options);
  batch.runUntil(events.length);
  return batch.result();
}

/**
 * Events normalised between two turns of the event loop. Normalising is synchronous work of a
 * few microseconds per event: a whole request of MAX_EVENTS_PER_REQUEST events in one go would
 * hold every other request (and `/health`) for its whole length.
 */
export const NORMALISE_CHUNK = 2_000;

/**
 * normaliseEvents in chunks of NORMALISE_CHUNK events, letting other requests run in between
 * (issue 25: 3.4 million events held `/health` for 35 s). The same result as normaliseEvents.
 */
export async function normaliseEventsYielding(events: unknown[], options: NormaliseOptions): Promise<NormalisedBatch> {
  const batch = batchNormaliser(events, options);
  for (let end = NORMALISE_CHUNK; ; end += NORMALISE_CHUNK) {
    batch.runUntil(Math.min(end, events.length));
    if (end >= events.length) return batch.result();
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The state of one batch's normalisation; `runUntil(end)` goes on from where it stopped. */
function batchNormaliser(events: unknown[], options: NormaliseOptions): { runUntil(end: number): void; result(): NormalisedBatch } {
  const rows: LogRow[] = [];
  const errors: EventError[] = [];
  let rejected = 0;
  const dropped: Record<DropReason, number> = { stale: 0, future: 0 };
  const schema = fieldMap();
  const walker = new Walker(options.checkStrings ?? true, options.reuseInput ?? false, options.schema);
  const oldestMs = options.keepAnyTimestamp ? -Infinity : options.nowMs - options.retentionDays * 86_400_000;
  const newestMs = options.keepAnyTimestamp ? Infinity : options.nowMs + MAX_FUTURE_MS;
  const unparsed = options.unparsed;

  let index = 0;
  // Not a closure per event: a body of millions of events allocated one each.
  const fail = (message: string) => {
    rejected++;
    if (errors.length < MAX_LISTED_ERRORS) errors.push({ index, message });
  };
  const runUntil = (end: number): void => {
    for (; index < end; index++) {
      const event = events[index];
      if (!isPlainObject(event)) {
        fail(unparsed?.get(index) ?? 'an event must be a JSON object');
        continue;
      }

      let id: string;
      if (event.id === undefined || event.id === null) id = randomUUID();
      else if ((typeof event.id === 'string' && event.id.length > 0 && event.id.length <= 200) || typeof event.id === 'number')
        id = String(event.id);
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
      if (ms > newestMs) {
        dropped.future++;
        continue;
      }
      if (ms < oldestMs) {
        dropped.stale++;
        continue;
      }

      // `message` is the event message only without `event_message`; beside it, it is an ordinary field.
      const messageIsOwn = event.event_message === undefined || event.event_message === null;
      const message = messageIsOwn ? event.message : event.event_message;
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

      walker.begin();
      let metadata: unknown = null;
      if (event.metadata !== undefined && event.metadata !== null) {
        metadata = walker.stored(event.metadata, 'metadata', schema, 1, walker.known);
      }
      const reserved = messageIsOwn ? COLUMN_KEYS_AND_MESSAGE : COLUMN_KEYS;
      let body: Record<string, unknown> | null = null;
      let renamed = false;
      // The reserved keys (columns) are not fields: room for them.
      if (walker.pastBudget(event, walker.known, schema, reserved.size)) walker.refuseFields();
      for (const key in event) {
        if (walker.problem) break;
        if (reserved.has(key)) continue;
        if (walker.fieldName(key) !== key) {
          renamed = true;
          break;
        }
        body ??= {};
        setOwn(body, key, walker.stored(event[key], key, schema, 1, walker.known));
      }
      if (renamed && !walker.problem) {
        // Some key is not an identifier: name them all by the collision rule (shape.ts storedNames),
        // which also keeps e.g. "event-message" from shadowing the event_message column.
        // Keys before the first renamed one are identifiers, already walked and kept as they are.
        const walked = body;
        body = {};
        const keys = Object.keys(event).filter((k) => !reserved.has(k));
        const names = storedNames(keys, reserved);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i];
          const value =
            walked !== null && Object.hasOwn(walked, key) ? walked[key] : walker.stored(event[key], names[i], schema, 1, walker.known);
          setOwn(body, names[i], value);
        }
      }
      if (walker.problem) {
        walker.undo();
        fail(`the event ${walker.problem}`);
        continue;
      }

      rows.push({
        id,
        micros,
        event_message: message ?? null,
        project: event.project ?? null,
        metadata,
        body,
      });
    }
  };
  return { runUntil, result: () => ({ rows, fields: schema, errors, rejected, dropped }) };
}

/**
 * A map of fields with no prototype: event keys such as `constructor` or `valueOf` must not find
 * Object's properties where a field of that name has not been seen yet.
 */
function fieldMap(): Record<string, MutableField> {
  return Object.create(null) as Record<string, MutableField>;
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
  /**
   * Schema changes made while walking the current event, as (parent, key, previous value)
   * triples: undone when the event turns out invalid, so it leaves no field or widened type.
   * Few entries per event: a field already seen with the same type changes nothing.
   */
  readonly journal: unknown[] = [];
  private readonly names = new Map<string, string>();

  /** Fields the batch's valid events add to the source's schema; and the count before the current event. */
  private added = 0;
  private addedBefore = 0;
  /** How many fields the batch may add: MAX_FIELDS_PER_SOURCE less those the source has. */
  private readonly budget: number;

  constructor(
    readonly checkStrings: boolean,
    private readonly inPlace: boolean,
    /** The source's schema, where a field already is is not new. */
    readonly known?: FieldMap,
  ) {
    this.budget = known ? MAX_FIELDS_PER_SOURCE - countFields(known) : Infinity;
  }

  /** The event would take the source's schema past its field cap. */
  refuseFields(): void {
    this.problem ??= `would take the source's schema past ${MAX_FIELDS_PER_SOURCE} fields (the limit of one source)`;
  }

  /** Before each event. */
  begin(): void {
    this.problem = undefined;
    this.journal.length = 0;
    this.addedBefore = this.added;
  }

  /**
   * security: `count` fields new to the batch at `key` count against the budget unless the
   * source has them. 100,000 distinct metadata keys in one 1.5 MB batch grew a schema to 4.8 MB,
   * and every later translation ran "did you mean" over all of them (issue 25, finding 4).
   */
  private fresh(known: FieldMap | undefined, key: string, count: number): void {
    if (known !== undefined && Object.hasOwn(known, key)) return;
    this.added += count;
    if (this.added > this.budget) this.refuseFields();
  }

  /**
   * The stored shape of `value` (objects become one-element arrays), its type merged into
   * `parent[key]`. Same results as toStoredShape / inferField / mergeField, in one pass.
   */
  stored(value: unknown, key: string, parent: Record<string, MutableField>, depth: number, known: FieldMap | undefined): unknown {
    if (value === null || value === undefined) return value;
    const acc = parent[key];
    const counted = acc === undefined && this.budget !== Infinity;
    if (counted) this.fresh(known, key, 1);
    switch (typeof value) {
      case 'string':
        if (this.checkStrings && !this.problem) this.problem = unstorableReason(value);
        if (acc === undefined) this.set(parent, key, { type: 'STRING', repeated: false });
        else if (acc.type !== 'STRING' && acc.type !== 'RECORD') this.set(parent, key, { type: 'STRING', repeated: acc.repeated });
        return value;
      case 'number': {
        if (!this.problem) this.problem = numberProblem(value);
        const type = Number.isInteger(value) ? 'INT64' : 'FLOAT64';
        if (acc === undefined) this.set(parent, key, { type, repeated: false });
        else if (acc.type !== type && acc.type !== 'RECORD') {
          const numeric = acc.type === 'INT64' || acc.type === 'FLOAT64';
          this.set(parent, key, { type: numeric ? 'FLOAT64' : 'STRING', repeated: acc.repeated });
        }
        return value;
      }
      case 'boolean':
        if (acc === undefined) this.set(parent, key, { type: 'BOOL', repeated: false });
        else if (acc.type !== 'BOOL' && acc.type !== 'RECORD') this.set(parent, key, { type: 'STRING', repeated: acc.repeated });
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
      const inferred = inferField(value);
      if (counted && inferred?.fields) this.fresh(known, key, countFields(inferred.fields));
      this.set(parent, key, mergeField(acc, inferred) as MutableField);
      return toStoredShape(value);
    }
    let record = acc;
    if (record === undefined || record.type !== 'RECORD') {
      record = { type: 'RECORD', repeated: true, single: true, fields: fieldMap() }; // a record wins over a scalar
      this.set(parent, key, record);
    }
    if (record.fields === undefined)
      this.set(record as unknown as Record<string, MutableField>, 'fields', fieldMap() as unknown as MutableField);
    const fields = record.fields!;
    const object = value as Record<string, unknown>;
    const knownFields = known !== undefined && Object.hasOwn(known, key) ? known[key].fields : undefined;
    if (this.pastBudget(object, knownFields, fields)) {
      this.refuseFields();
      return null;
    }
    const kept = this.keysKept(object);
    if (kept && this.inPlace) {
      for (const k in object) {
        if (this.problem) break;
        object[k] = this.stored(object[k], k, fields, depth + 1, knownFields);
      }
      return [object];
    }
    const out: Record<string, unknown> = {};
    if (kept) {
      for (const k in object) {
        // An event found invalid is not walked further: 100,000 new keys past the field cap cost one check each.
        if (this.problem) break;
        setOwn(out, k, this.stored(object[k], k, fields, depth + 1, knownFields));
      }
    } else {
      const keys = Object.keys(object);
      const names = storedNames(keys);
      for (let i = 0; i < keys.length; i++) setOwn(out, names[i], this.stored(object[keys[i]], names[i], fields, depth + 1, knownFields));
    }
    return [out];
  }

  /** Undoes the schema changes of the current event (see `journal`). */
  undo(): void {
    this.added = this.addedBefore;
    const j = this.journal;
    for (let i = j.length - 3; i >= 0; i -= 3) {
      const parent = j[i] as Record<string, unknown>;
      const key = j[i + 1] as string;
      const previous = j[i + 2];
      if (previous === undefined) delete parent[key];
      else parent[key] = previous;
    }
    j.length = 0;
  }

  private set(parent: Record<string, MutableField>, key: string, value: MutableField): void {
    this.journal.push(parent, key, parent[key]);
    parent[key] = value;
  }

  /**
   * security: whether `object` surely has more new keys than the batch may still add, so the event
   * is refused before its keys are named or walked (one 1.5 MB event of 100,000 keys held the event
   * loop for a second; issue 25, finding 4). Repeats cost nothing (`fresh`), so every key the source
   * (`known`) or the batch (`seen`) already has at this level, and `spare` more, may be among them:
   * the room is counted generously and `fresh` still makes the exact check for what passes.
   */
  pastBudget(object: Record<string, unknown>, known: FieldMap | undefined, seen: object, spare = 0): boolean {
    if (this.budget === Infinity) return false;
    let room = this.budget - this.added + spare;
    let keys = 0;
    for (const _ in object) if (++keys > room) break;
    if (keys <= room) return false;
    if (known !== undefined) for (const _ in known) room++;
    for (const _ in seen) room++;
    keys = 0;
    for (const _ in object) if (++keys > room) return true;
    return false;
  }

  /** True when every key is stored as it is (the common case), so the object can be reused. */
  private keysKept(object: Record<string, unknown>): boolean {
    for (const k in object) if (this.fieldName(k) !== k) return false;
    return true;
  }

  /** fieldName, remembered for the keys of this batch. */
  fieldName(key: string): string {
    let name = this.names.get(key);
    if (name === undefined) {
      name = fieldName(key);
      if (this.names.size < 10_000) this.names.set(key, name);
    }
    return name;
  }
}

/** Fields of a schema at every depth (a record counts, and so does each of its fields). */
export function countFields(fields: FieldMap): number {
  let n = 0;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const sub = fields[key].fields;
    n += 1 + (sub ? countFields(sub) : 0);
  }
  return n;
}
