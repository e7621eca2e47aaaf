/**
 * A live-tail viewer over HTTP, as the console reads the stream (a fetch with the key in a header,
 * docs/CONSOLE.md "Live tail"): `GET /api/sources/:source/tail?lql=` answers server-sent events.
 * Resolves once the service says it listens (`event: ready`); `onEvents` gets each `events`
 * frame's events with the time it arrived. Used by test/hardening/tail-processes.test.ts and
 * bench/tail.ts.
 */
export interface TailedEvent {
  event_message: string;
}

export async function openTail(
  base: string,
  source: string,
  key: string,
  lql: string,
  onEvents: (events: TailedEvent[], atMs: number) => void,
): Promise<{ close: () => void }> {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/sources/${source}/tail?lql=${encodeURIComponent(lql)}`, {
    headers: { 'X-API-KEY': key },
    signal: controller.signal,
  });
  if (res.status !== 200) throw new Error(`tail ${lql}: ${res.status} ${await res.text()}`);
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame.includes('event: ready')) ready();
        const data = /^event: events\ndata: (.*)$/m.exec(frame)?.[1];
        if (data) onEvents(JSON.parse(data) as TailedEvent[], Date.now());
      }
    }
  })().catch(() => undefined);
  await isReady;
  return { close: () => controller.abort() };
}
