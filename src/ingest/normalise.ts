/**
 * Turns posted events into rows of a log table: fixed columns, `metadata` and `body`
 * in the stored BigQuery shape, and the schema they imply.
 */
import { randomUUID } from 'node:crypto';
import { FIXED_COLUMNS, inferField, mergeFieldMaps, type FieldMap } from '../sources/schema.js';
import { fieldName, isPlainObject, toStoredShape } from './shape.js';
import { unstorableReason } from './storable.js';
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
}

const MAX_FUTURE_MS = 24 * 3_600_000;
/** Top-level keys that are not stored in `body`. */
const OWN_KEYS = new Set(['id', 'timestamp', 'event_message', 'message', 'project', 'metadata']);

export function normaliseEvents(events: unknown[], options: { nowMs: number; retentionDays: number }): NormalisedBatch {
  const rows: LogRow[] = [];
  const errors: EventError[] = [];
  let fields: FieldMap = {};
  const oldestMs = options.nowMs - options.retentionDays * 86_400_000;

  events.forEach((event, index) => {
    const fail = (message: string) => errors.push({ index, message });
    if (!isPlainObject(event)) return fail('an event must be a JSON object');
    const unstorable = unstorableReason(event);
    if (unstorable) return fail(`the event ${unstorable}`);

    let id: string;
    if (event.id === undefined || event.id === null) id = randomUUID();
    else if ((typeof event.id === 'string' && event.id.length > 0 && event.id.length <= 200) || typeof event.id === 'number') id = String(event.id);
    else return fail('id must be a non-empty string of at most 200 characters');

    let micros: bigint;
    if (event.timestamp === undefined || event.timestamp === null) micros = BigInt(options.nowMs) * 1000n;
    else {
      const parsed = parseEventTimestamp(event.timestamp);
      if ('error' in parsed) return fail(parsed.error);
      micros = parsed.micros;
    }
    const ms = Number(micros / 1000n);
    if (ms > options.nowMs + MAX_FUTURE_MS) return fail('timestamp is more than 24 hours in the future');
    if (ms < oldestMs) return fail(`timestamp is older than the source's retention of ${options.retentionDays} days`);

    const message = event.event_message ?? event.message;
    if (message !== undefined && message !== null && typeof message !== 'string') return fail('event_message must be a string');
    if (event.project !== undefined && event.project !== null && typeof event.project !== 'string') return fail('project must be a string');
    if (event.metadata !== undefined && event.metadata !== null && !isPlainObject(event.metadata) && !Array.isArray(event.metadata)) {
      return fail('metadata must be an object or an array of objects');
    }

    const seen: Record<string, ReturnType<typeof inferField> & object> = {};
    const metadataField = inferField(event.metadata);
    if (metadataField) seen.metadata = metadataField;

    let body: Record<string, unknown> | null = null;
    for (const [key, value] of Object.entries(event)) {
      if (OWN_KEYS.has(key)) continue;
      const name = fieldName(key);
      if (OWN_KEYS.has(name) || name in FIXED_COLUMNS) continue; // e.g. "event-message": would shadow a column
      body ??= {};
      body[name] = toStoredShape(value);
      const f = inferField(value);
      if (f) seen[name] = f;
    }
    fields = mergeFieldMaps(fields, seen);

    rows.push({
      id,
      micros,
      event_message: (message as string | null | undefined) ?? null,
      project: (event.project as string | null | undefined) ?? null,
      metadata: event.metadata === undefined || event.metadata === null ? null : toStoredShape(event.metadata),
      body,
    });
  });

  return { rows, fields, errors };
}
