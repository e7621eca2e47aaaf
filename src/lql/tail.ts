/**
 * Live tail: `GET /api/sources/:idOrName/tail?lql=` streams the new events matching LQL as
 * server-sent events (docs/API.md, "Live tail"). What makes it cheap:
 *
 * - the signal that something arrived is the ingest writer itself: `Arrivals.watch` wraps it, and
 *   after a batch is written tells the source's viewers the ids and times of its rows. No event,
 *   no signal, no query;
 * - each viewer queries at most once per TAIL_INTERVAL_MS, however many batches arrive: the ids
 *   of everything that arrived since its last query, with the LQL's filters, between the oldest
 *   and newest of their timestamps (so only those partitions are read);
 * - bounded: at most TAIL_MAX_PENDING ids wait per viewer (older ones are dropped and counted in
 *   a `skipped` event), a stream ends after TAIL_MAX_MS, and a paused viewer closes its stream.
 *
 * The signal is per process: on several replicas a viewer sees the events ingested by its own.
 */
import type { Response } from 'express';
import type { LogWriter } from '../ingest/write.js';
import type { LqlRules } from './rules.js';

export const TAIL_INTERVAL_MS = 1000;
export const TAIL_MAX_PENDING = 1000;
export const TAIL_MAX_MS = 15 * 60_000;

export interface Arrival {
  readonly id: string;
  /** Unix microseconds. */
  readonly micros: bigint;
}

type Listener = (arrivals: readonly Arrival[]) => void;

/** Who listens for new events of which source, told by the writer it wraps. */
export class Arrivals {
  private readonly listeners = new Map<string, Set<Listener>>();

  /** The writer, telling the source's listeners after each write that committed. */
  watch(writer: Pick<LogWriter, 'write'>): Pick<LogWriter, 'write'> {
    return {
      write: async (source, rows, ...rest) => {
        await writer.write(source, rows, ...rest);
        const listeners = this.listeners.get(source.name);
        if (!listeners?.size || !rows.length) return;
        const arrivals = rows.map((r) => ({ id: r.id, micros: r.micros }));
        for (const listener of listeners) listener(arrivals);
      },
    };
  }

  listen(source: string, listener: Listener): () => void {
    let set = this.listeners.get(source);
    if (!set) this.listeners.set(source, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (!set.size) this.listeners.delete(source);
    };
  }

  /** Viewers listening now, over all sources (metrics, tests). */
  get viewers(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }
}

export interface TailQuery {
  /** Runs the LQL over the given rows of the source; resolves to the matching events, oldest first. */
  (rules: LqlRules, ids: readonly string[], fromMicros: bigint, toMicros: bigint): Promise<Record<string, unknown>[]>;
}

/** One viewer's stream: pending ids, at most one query per interval, SSE frames out. */
export function streamTail(
  res: Response,
  arrivals: Arrivals,
  source: string,
  rules: LqlRules,
  query: TailQuery,
  intervalMs = TAIL_INTERVAL_MS,
): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  res.write(`: tail of ${source}\n\nevent: ready\ndata: {}\n\n`);
  let pending: Arrival[] = [];
  let skipped = 0;
  let timer: NodeJS.Timeout | undefined;
  let lastRun = 0;
  let running = false;
  let closed = false;

  const run = async () => {
    timer = undefined;
    if (closed || running || !pending.length) return;
    running = true;
    lastRun = Date.now();
    const batch = pending;
    pending = [];
    try {
      let from = batch[0].micros;
      let to = batch[0].micros;
      for (const a of batch) {
        if (a.micros < from) from = a.micros;
        if (a.micros > to) to = a.micros;
      }
      const rows = await query(
        rules,
        batch.map((a) => a.id),
        from,
        to,
      );
      if (skipped) res.write(`event: skipped\ndata: ${JSON.stringify({ count: skipped })}\n\n`);
      skipped = 0;
      if (rows.length && !closed) res.write(`event: events\ndata: ${JSON.stringify(rows)}\n\n`);
    } catch (err) {
      if (!closed) res.write(`event: problem\ndata: ${JSON.stringify({ message: (err as Error).message })}\n\n`);
    } finally {
      running = false;
      schedule();
    }
  };
  const schedule = () => {
    if (closed || timer || running || !pending.length) return;
    timer = setTimeout(() => void run(), Math.max(0, lastRun + intervalMs - Date.now()));
  };
  const stopListening = arrivals.listen(source, (rows) => {
    pending.push(...rows);
    if (pending.length > TAIL_MAX_PENDING) {
      skipped += pending.length - TAIL_MAX_PENDING;
      pending = pending.slice(pending.length - TAIL_MAX_PENDING);
    }
    schedule();
  });
  // A comment every 15 s keeps proxies from closing an idle stream; it costs no query.
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
  const end = setTimeout(() => {
    res.write('event: end\ndata: {"reason":"the stream lasts at most 15 minutes; reconnect to go on"}\n\n');
    res.end();
  }, TAIL_MAX_MS);
  res.on('close', () => {
    closed = true;
    stopListening();
    clearInterval(keepAlive);
    clearTimeout(end);
    if (timer) clearTimeout(timer);
  });
}
