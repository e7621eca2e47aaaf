/**
 * Ingest: find the source, normalise the events, write the valid ones in one transaction.
 * Resolves only after COMMIT, with what became of every event: stored, dropped (timestamp out
 * of range) or rejected (invalid). One bad event never costs the others.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Metrics } from '../metrics.js';
import { BadRequestError, tooManyInRequest } from '../errors.js';
import { MAX_EVENTS_PER_REQUEST } from '../inputLimits.js';
import type { SourceRecord } from '../sources/repository.js';
import type { SourceService } from '../sources/service.js';
import type { LogWriter } from './write.js';
import { normaliseEventsYielding, type DropReason, type EventError } from './normalise.js';

export interface IngestDeps {
  sources: Pick<SourceService, 'get'>;
  writer: Pick<LogWriter, 'write'>;
  metrics: Pick<Metrics, 'ingestedEvents' | 'droppedEvents' | 'rejectedEvents'>;
}

/** What became of a batch, once the valid events are committed. */
export interface IngestOutcome {
  /** Events sent. */
  total: number;
  /** Events stored (committed). */
  count: number;
  /** Valid events not stored because of their timestamp, by reason. */
  dropped: Record<DropReason, number>;
  /** Invalid events. */
  rejected: number;
  /** The first invalid events (normalise.ts MAX_LISTED_ERRORS), by index. */
  errors: EventError[];
}

export interface IngestInput {
  events: unknown[];
  /** See NormaliseOptions.checkStrings. */
  mayHoldUnstorable: boolean;
  /** Events that could not be parsed (NDJSON lines), by index. */
  unparsed?: ReadonlyMap<number, string>;
}

export class IngestService {
  constructor(private readonly deps: IngestDeps) {}

  /**
   * The source of a request: `?source=` (a UUID; a name is accepted too), else `?source_name=`,
   * else the `x-source` header (OTLP exporters can set headers but not always the URL).
   * 400 without any, 404 when unknown.
   */
  async resolveSource(query: { source_name?: unknown; source?: unknown }, headers: IncomingHttpHeaders = {}): Promise<SourceRecord> {
    const ref = nonEmptyString(query.source) ?? nonEmptyString(query.source_name) ?? nonEmptyString(headers['x-source']);
    if (!ref) {
      throw new BadRequestError('Name the source: ?source_name=<name>, ?source=<id> or the x-source header.', [
        {
          domain: 'params',
          reason: 'missingParameter',
          message: 'source_name, source or the x-source header is required',
          location: 'source_name',
        },
      ]);
    }
    return this.deps.sources.get(ref);
  }

  /** Writes the valid events (all in one transaction) and says what became of each. */
  async ingest(source: SourceRecord, input: IngestInput, nowMs = Date.now()): Promise<IngestOutcome> {
    // The body parsers refuse such a body before parsing it (bodyCounts.ts); this holds for every path in.
    if (input.events.length > MAX_EVENTS_PER_REQUEST) throw tooManyInRequest('events', MAX_EVENTS_PER_REQUEST);
    const batch = await normaliseEventsYielding(input.events, {
      nowMs,
      retentionDays: source.retention_days,
      checkStrings: input.mayHoldUnstorable,
      reuseInput: true,
      unparsed: input.unparsed,
      schema: source.schema,
    });
    await this.deps.writer.write(source, batch.rows, batch.fields);
    const { metrics } = this.deps;
    if (batch.rows.length) metrics.ingestedEvents.inc({ source: source.name }, batch.rows.length);
    for (const reason of ['stale', 'future'] as const) {
      if (batch.dropped[reason]) metrics.droppedEvents.inc({ source: source.name, reason }, batch.dropped[reason]);
    }
    if (batch.rejected) metrics.rejectedEvents.inc({ source: source.name }, batch.rejected);
    return { total: input.events.length, count: batch.rows.length, dropped: batch.dropped, rejected: batch.rejected, errors: batch.errors };
  }
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
