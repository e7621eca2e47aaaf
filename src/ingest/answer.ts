/**
 * The answer to an ingest request once its valid events are committed (docs/INGEST.md):
 *
 *   every event stored:                200 {"message": "Logged!", "count": N}
 *   some dropped (timestamp out of range), none invalid:
 *                                      200 {"message": "Logged!", "count": N, "dropped": K}
 *   some invalid:                      406 {"error": {…, "errors": [one per invalid event, location = its index]},
 *                                           "count": N, "rejected": R[, "dropped": K]}
 *
 * 406 and not 400 for invalid events: the events that were valid are stored and must not be
 * sent again, and shippers do not retry a 4xx, so nothing is stored twice.
 */
import type { ErrorDetail } from '../errors.js';
import type { IngestOutcome } from './service.js';

export interface IngestAnswer {
  status: number;
  body: Record<string, unknown>;
}

export function ingestAnswer(outcome: IngestOutcome): IngestAnswer {
  const dropped = outcome.dropped.stale + outcome.dropped.future;
  const extra = dropped > 0 ? { dropped } : {};
  if (outcome.rejected === 0) return { status: 200, body: { message: 'Logged!', count: outcome.count, ...extra } };
  const errors: ErrorDetail[] = outcome.errors.map((e) => ({
    domain: 'ingest',
    reason: 'invalidEvent',
    message: e.message,
    location: String(e.index),
  }));
  return {
    status: 406,
    body: {
      error: { code: 406, status: 'INVALID_ARGUMENT', message: rejectionMessage(outcome), errors },
      count: outcome.count,
      rejected: outcome.rejected,
      ...extra,
    },
  };
}

/** One sentence: how many were invalid, the first reason, and what was stored anyway. */
export function rejectionMessage(outcome: IngestOutcome): string {
  const first = outcome.errors[0];
  const listed = outcome.errors.length < outcome.rejected ? ` (the first ${outcome.errors.length} are listed)` : '';
  const which = first ? `; the first, event ${first.index}: ${first.message}` : '';
  const dropped = outcome.dropped.stale + outcome.dropped.future;
  const droppedText = dropped > 0 ? `, ${dropped} dropped for their timestamp (older than the retention or more than 1 hour ahead)` : '';
  const stored =
    outcome.count === 0
      ? 'Nothing was stored'
      : outcome.count === 1
        ? 'The 1 valid event was stored'
        : `The ${outcome.count} valid events were stored`;
  return `${outcome.rejected} of ${outcome.total} events are invalid${listed}${which}${droppedText}. ${stored}; send only the invalid ones again, corrected.`;
}

/** Why records were not stored, for OTLP's partial_success.error_message. */
export function notStoredMessage(outcome: IngestOutcome): string {
  const parts: string[] = [];
  if (outcome.rejected > 0) {
    const first = outcome.errors[0];
    parts.push(`${outcome.rejected} invalid${first ? ` (the first, record ${first.index}: ${first.message})` : ''}`);
  }
  if (outcome.dropped.stale > 0) parts.push(`${outcome.dropped.stale} older than the source's retention`);
  if (outcome.dropped.future > 0) parts.push(`${outcome.dropped.future} more than 1 hour in the future`);
  return parts.length ? `log records not stored: ${parts.join('; ')}` : '';
}
