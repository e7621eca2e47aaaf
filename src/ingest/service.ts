/**
 * Ingest: find the source, normalise the events, reject the whole batch if any event is
 * invalid, else write it in one transaction. Resolves only after COMMIT.
 */
import type { AppContext } from '../context.js';
import { BadRequestError, type ErrorDetail } from '../errors.js';
import type { SourceRecord } from '../sources/repository.js';
import { normaliseEvents, type EventError } from './normalise.js';
import type { ParsedEvents } from './parseBody.js';

/** At most this many per-event errors are listed in a 400 (the message gives the total). */
export const MAX_LISTED_ERRORS = 100;

export type IngestContext = Pick<AppContext, 'sources' | 'writer' | 'metrics'>;

export class IngestService {
  constructor(private readonly ctx: IngestContext) {}

  /** `?source_name=` or `?source=` (a UUID; a name is accepted too): 400 without either, 404 when unknown. */
  async resolveSource(query: { source_name?: unknown; source?: unknown }): Promise<SourceRecord> {
    const ref = nonEmptyString(query.source) ?? nonEmptyString(query.source_name);
    if (!ref) {
      throw new BadRequestError('Name the source: ?source_name=<name> or ?source=<id>.', [
        { domain: 'params', reason: 'missingParameter', message: 'source_name or source is required', location: 'source_name' },
      ]);
    }
    return this.ctx.sources.get(ref);
  }

  /** Writes all events or none; returns how many were committed. */
  async ingest(source: SourceRecord, parsed: ParsedEvents, nowMs = Date.now()): Promise<number> {
    const batch = normaliseEvents(parsed.events, { nowMs, retentionDays: source.retention_days, checkStrings: parsed.mayHoldUnstorable, reuseInput: true });
    const errors = mergeErrors(batch.errors, parsed.lineErrors);
    if (errors.length) throw invalidBatchError(errors, parsed.events.length, Boolean(parsed.errorsTruncated || batch.errorsTruncated));
    await this.ctx.writer.write(source, batch.rows, batch.fields);
    this.ctx.metrics.ingestedEvents.inc({ source: source.name }, batch.rows.length);
    return batch.rows.length;
  }
}

/** NDJSON lines that did not parse replace the "not an object" error normalisation gives their slot. */
function mergeErrors(events: EventError[], lines: EventError[]): EventError[] {
  if (lines.length === 0) return events;
  const unparsed = new Set(lines.map((l) => l.index));
  return [...events.filter((e) => !unparsed.has(e.index)), ...lines].sort((a, b) => a.index - b.index);
}

/** `truncated`: checking stopped early (normalise.ts MAX_COLLECTED_ERRORS, parseBody.ts MAX_LINE_ERRORS). */
function invalidBatchError(errors: EventError[], total: number, truncated = false): BadRequestError {
  const listed = errors.slice(0, MAX_LISTED_ERRORS);
  const details: ErrorDetail[] = listed.map((e) => ({ domain: 'ingest', reason: 'invalidEvent', message: e.message, location: String(e.index) }));
  const first = errors[0]!;
  const more = errors.length > listed.length ? ` (the first ${listed.length} are listed)` : '';
  const message = truncated
    ? `At least ${errors.length} events are invalid (checking stopped there)${more}; the first, event ${first.index}: ${first.message}. Nothing of the batch was written.`
    : errors.length === 1
    ? `Event ${first.index} is invalid: ${first.message}. Nothing of the batch was written.`
    : `${errors.length} of ${total} events are invalid${more}; the first, event ${first.index}: ${first.message}. Nothing of the batch was written.`;
  return new BadRequestError(message, details);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
