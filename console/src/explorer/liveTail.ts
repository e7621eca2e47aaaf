/**
 * The explorer's live tail: `GET /api/sources/:x/tail?lql=` (server-sent events, docs/API.md,
 * "Live tail") read with fetch, not EventSource, because EventSource cannot send the X-API-KEY
 * header and the key never goes in a URL (docs/CONSOLE.md, "Live tail"). One stream per viewer;
 * the service runs its query at most once a second per stream, whatever arrives.
 */
import { apiKey, type ApiError, type Row } from '../api/client';

export interface TailHandlers {
  /** The stream is listening: events ingested from now on will come. */
  onReady(): void;
  /** New matching events, oldest first. */
  onEvents(rows: Row[]): void;
  /** Arrivals the service skipped (more than it keeps waiting per viewer). */
  onSkipped(count: number): void;
  /** The stream ended (the service's 15-minute limit, a network cut) and was not closed here. */
  onEnd(reason: string): void;
  /** The service refused the tail (an LQL problem: 400 with the envelope) or a query failed. */
  onProblem(problem: ApiError['error']): void;
}

/** Opens the stream; `close()` ends it (pausing is closing: the service stops listening). */
export function openTail(source: string, lql: string, handlers: TailHandlers): { close(): void } {
  const controller = new AbortController();
  void (async () => {
    let reason = 'the stream ended';
    try {
      const response = await fetch(`/api/sources/${encodeURIComponent(source)}/tail?lql=${encodeURIComponent(lql)}`, {
        headers: { 'X-API-KEY': apiKey.get() ?? '', Accept: 'text/event-stream' },
        signal: controller.signal,
      });
      if (!response.ok || !response.body) {
        const body = (await response.json().catch(() => null)) as ApiError | null;
        handlers.onProblem(body?.error ?? { code: response.status, status: 'ERROR', message: response.statusText, errors: [] });
        return;
      }
      for await (const frame of frames(response.body)) {
        if (frame.event === 'ready') handlers.onReady();
        else if (frame.event === 'events') handlers.onEvents(JSON.parse(frame.data) as Row[]);
        else if (frame.event === 'skipped') handlers.onSkipped((JSON.parse(frame.data) as { count: number }).count);
        else if (frame.event === 'problem')
          handlers.onProblem({ code: 500, status: 'ERROR', message: (JSON.parse(frame.data) as { message: string }).message, errors: [] });
        else if (frame.event === 'end') reason = (JSON.parse(frame.data) as { reason: string }).reason;
      }
    } catch (err) {
      if (controller.signal.aborted) return;
      reason = (err as Error).message;
    }
    if (!controller.signal.aborted) handlers.onEnd(reason);
  })();
  return { close: () => controller.abort() };
}

/** Server-sent event frames (`event:` and `data:` lines, a blank line between frames). */
async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}
