/**
 * The original's events, source by source and UTC day by day, through the normal write path:
 * the same normalisation as ingest (schema inference, the stored shape, the checks), the same
 * writer (partitions, hot leaves and their facts, the schema merge), without the drop of events
 * past the retention or ahead of the clock (they were stored by the original; retention then
 * treats them as any other).
 *
 * Resumable and idempotent (docs/MIGRATING.md, "Running it again"): each batch is written in one
 * transaction with the day's cursor in `logflare_import_days` (the last event's timestamp and
 * the original's event id, the order the day is read in), so a run stopped anywhere, even killed,
 * resumes after the last batch that committed and writes no event twice. A day before the day the
 * run started is marked done and never read again; the current day is read again from its cursor
 * (the original may still be receiving events).
 */
import type pg from 'pg';
import type { SourceService } from '../../sources/service.js';
import type { LogWriter } from '../../ingest/write.js';
import { normaliseEvents } from '../../ingest/normalise.js';
import { isPlainObject } from '../../sources/shape.js';
import { dayEvents, eventDays, type EventDay, type OriginalEvent } from './original.js';
import type { ImportedSource } from './catalog.js';
import type { ProgressBar } from './progressBar.js';

export interface SourceEventsReport {
  source: string;
  /** Events in the original's table. */
  events: number;
  /** Events here from this import, this run and earlier ones. */
  imported: number;
  /** Events the write path refused (with the first reasons), not imported. */
  rejected: number;
  reasons: string[];
  /** Set when the original has no event table for the source. */
  note?: string;
}

export interface EventsDeps {
  pool: pg.Pool;
  sources: SourceService;
  writer: Pick<LogWriter, 'write'>;
}

export interface EventsOptions {
  schema: string;
  batchSize: number;
  /** The clock: the day it falls on is never marked done. */
  nowMs: number;
  progress: ProgressBar;
  /** Checked between batches: a stop request ends the run after the batch in flight (resumed next time). */
  signal?: AbortSignal;
}

interface DayProgress {
  day: string;
  after_timestamp: string | null;
  after_id: string | null;
  events: string;
  rejected: string;
  done: boolean;
}

/** How many reasons of refused events a source's report lists. */
const LISTED_REASONS = 5;

/** The days of every source first (the progress bar's total), then their events. */
export async function importEvents(
  deps: EventsDeps,
  client: pg.Client,
  sources: readonly ImportedSource[],
  options: EventsOptions,
): Promise<SourceEventsReport[]> {
  const plans: { source: ImportedSource; days: EventDay[] | undefined; progress: Map<string, DayProgress> }[] = [];
  for (const source of sources) {
    const days = await eventDays(client, options.schema, source.token);
    const { rows } = await deps.pool.query<DayProgress>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, after_timestamp, after_id, events, rejected, done
         FROM logflare_import_days WHERE source_id = $1`,
      [source.token],
    );
    plans.push({ source, days, progress: new Map(rows.map((r) => [r.day, r])) });
  }
  let total = 0;
  let already = 0;
  for (const p of plans) {
    for (const d of p.days ?? []) {
      total += d.events;
      const done = p.progress.get(d.day);
      if (done) already += Math.min(d.events, Number(done.events) + Number(done.rejected));
    }
  }
  options.progress.start(total, already);

  const today = new Date(options.nowMs).toISOString().slice(0, 10);
  const reports: SourceEventsReport[] = [];
  for (const { source, days, progress } of plans) {
    const report: SourceEventsReport = { source: source.name, events: 0, imported: 0, rejected: 0, reasons: [] };
    reports.push(report);
    if (!days) {
      report.note = 'the original has no event table for it';
      continue;
    }
    for (const { day, events } of days) {
      report.events += events;
      const before = progress.get(day);
      if (before) {
        report.imported += Number(before.events);
        report.rejected += Number(before.rejected);
      }
      if (before?.done || options.signal?.aborted) continue;
      const after = before?.after_timestamp && before.after_id !== null ? { ts: before.after_timestamp, id: before.after_id } : undefined;
      for await (const batch of dayEvents(client, options.schema, source.token, day, after, options.batchSize)) {
        const { stored, rejected, reasons } = await writeBatch(deps, source, day, batch, options.nowMs);
        report.imported += stored;
        report.rejected += rejected;
        for (const r of reasons) if (report.reasons.length < LISTED_REASONS && !report.reasons.includes(r)) report.reasons.push(r);
        options.progress.advance(stored + rejected, `${source.name} ${day}`);
        if (options.signal?.aborted) break;
      }
      if (day < today && !options.signal?.aborted) {
        // Its row may not exist yet (every event of the day was read in an earlier run, none left).
        await recordProgress(deps.pool, source.token, day, undefined, 0, 0, true);
      }
    }
  }
  return reports;
}

/** One batch: normalised as ingest does, written with the day's cursor in the same transaction. */
async function writeBatch(
  deps: EventsDeps,
  imported: ImportedSource,
  day: string,
  batch: OriginalEvent[],
  nowMs: number,
): Promise<{ stored: number; rejected: number; reasons: string[] }> {
  const source = await deps.sources.get(imported.token);
  const normalised = normaliseEvents(batch.map(toEvent), {
    nowMs,
    retentionDays: source.retention_days,
    keepAnyTimestamp: true,
    reuseInput: true,
    schema: source.schema,
  });
  const last = batch[batch.length - 1];
  const cursor = { ts: last.ts, id: last.id };
  const stored = normalised.rows.length;
  const record = (client: pg.PoolClient | pg.Pool) =>
    recordProgress(client, imported.token, day, cursor, stored, normalised.rejected, false);
  if (stored) await deps.writer.write(source, normalised.rows, normalised.fields, record);
  else await record(deps.pool);
  return {
    stored,
    rejected: normalised.rejected,
    reasons: normalised.errors.map((e) => `event ${batch[e.index]?.id ?? e.index}: ${e.message}`),
  };
}

/** Adds to a day's counts and moves its cursor (when given); `done` only ever turns true. */
async function recordProgress(
  db: pg.PoolClient | pg.Pool,
  sourceId: string,
  day: string,
  cursor: { ts: string; id: string } | undefined,
  events: number,
  rejected: number,
  done: boolean,
): Promise<void> {
  await db.query(
    `INSERT INTO logflare_import_days AS d (source_id, day, after_timestamp, after_id, events, rejected, done)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (source_id, day) DO UPDATE SET
       after_timestamp = coalesce(EXCLUDED.after_timestamp, d.after_timestamp),
       after_id = coalesce(EXCLUDED.after_id, d.after_id),
       events = d.events + EXCLUDED.events,
       rejected = d.rejected + EXCLUDED.rejected,
       done = d.done OR EXCLUDED.done,
       updated_at = now()`,
    [sourceId, day, cursor?.ts ?? null, cursor?.id ?? null, events, rejected, done],
  );
}

/**
 * The event as the original stored it (`body`), with its columns over it: the id the original
 * gave it (kept as ours), its timestamp to the microsecond, its message.
 */
function toEvent(row: OriginalEvent): Record<string, unknown> {
  const event: Record<string, unknown> = isPlainObject(row.body) ? row.body : {};
  event.id = row.id;
  // `timestamp without time zone` holds UTC (the original's adaptor writes naive UTC).
  event.timestamp = `${row.ts.replace(' ', 'T')}Z`;
  if (row.event_message !== null) event.event_message = row.event_message;
  return event;
}
