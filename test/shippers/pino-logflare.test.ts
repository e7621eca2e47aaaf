/**
 * The original's JavaScript transport, `pino-logflare` (built on `logflare-transport-core`):
 * it posts `{"batch": [...]}` to `/logs?source_name=…` or `/logs?source=<uuid>` with `X-API-Key`.
 * Run as pino runs it (a transport in a worker thread) and as an in-process stream; every
 * event read back from the log table.
 */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createWriteStream } from 'pino-logflare';
import type { SourceRecord } from '../../src/sources/repository.js';
import { waitFor } from '../support/wait.js';
import { freshSource, serveTestApp, sourceRows, type Served } from './support.js';

describe('pino-logflare, the original JavaScript transport, posting to /logs', function () {
  this.timeout(60_000);
  let s: Served;
  let source: SourceRecord;
  before(async () => {
    s = await serveTestApp();
    source = await freshSource(s, 'pino');
  });
  after(() => s.close());

  const rowsOf = async (tag: string) => (await sourceRows(s, source)).filter((r) => r.metadata?.[0]?.tag === tag);

  it('when pino sends 25 events through the pino-logflare transport (worker thread, by source name), then every one is stored with its fields', async () => {
    const tag = 'pino-worker';
    // batchSize above the event count: pino-logflare 0.5.2's own batching sends a batch by size
    // and empties it only after the post returns, so events added meanwhile are posted again by
    // its timer (tried with batchSize 10: 30 rows for 26 events, every post answered 200). That
    // is the client's doing; here its timer sends everything once.
    const transport = pino.transport({
      target: 'pino-logflare',
      options: { apiKey: s.keys.ingest, sourceName: source.name, apiBaseUrl: s.base, batchSize: 1000, batchTimeout: 50 },
    });
    const log = pino(transport);
    for (let i = 0; i < 25; i++) log.info({ tag, i, request: { method: 'GET', 'content-type': 'text/plain' } }, `worker event ${i}`);
    log.warn({ tag, i: 25 }, 'worker event 25');
    const rows = await waitFor(
      '26 rows',
      () => rowsOf(tag),
      (r) => r.length >= 26,
    );
    // The worker is stopped, not ended: thread-stream's end() blocks this thread (Atomics.wait)
    // until the worker has flushed, and a flush in flight waits for this thread's server to
    // answer, so under load end() timed out after 10 s. What was delivered is read above.
    transport.on('error', () => undefined); // "the worker has exited", expected here
    await (transport as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    assert.equal(rows.length, 26);
    const byI = new Map(rows.map((r) => [r.metadata[0].i as number, r]));
    for (let i = 0; i < 26; i++) assert.equal(byI.get(i)?.event_message, `worker event ${i}`);
    const first = byI.get(0)!.metadata[0];
    assert.equal(first.level, 'info');
    assert.equal(byI.get(25)!.metadata[0].level, 'warning');
    assert.deepEqual(first.request, [{ method: 'GET', content_type: 'text/plain' }]);
    assert.equal(first.context[0].pid, process.pid);
  });

  it('when the in-process stream sends events by source token (the source UUID), then every one is stored', async () => {
    const tag = 'pino-stream';
    const stream = createWriteStream({ apiKey: s.keys.ingest, sourceToken: source.id, apiBaseUrl: s.base, size: 4 });
    const log = pino(stream);
    for (let i = 0; i < 12; i++) log.error({ tag, i }, `stream event ${i}`);
    const rows = await waitFor(
      '12 rows',
      () => rowsOf(tag),
      (r) => r.length >= 12,
    );
    assert.deepEqual(rows.map((r) => r.event_message).sort(), Array.from({ length: 12 }, (_, i) => `stream event ${i}`).sort());
    stream.end();
  });
});
