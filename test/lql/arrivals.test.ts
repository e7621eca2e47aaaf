/**
 * Live tail's "new events" signal between processes (src/lql/arrivals.ts RedisArrivalRelay), on
 * the real Redis, each relay standing for one service process (a namespace of this test's own):
 * a viewer that arrives as the last one of its process leaves still hears the others, and a
 * process that starts after a viewer learns of it from its own question, not from the next
 * periodic hello (set to an hour here, so only the question can tell it).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Arrivals, RedisArrivalRelay } from '../../src/lql/arrivals.js';
import { createLogger } from '../../src/logger.js';
import { eventually } from '../support/wait.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const HOUR_MS = 3_600_000;

describe('live tail relay between processes (RedisArrivalRelay)', function () {
  this.timeout(60_000);
  const namespace = `lq-test-arrivals-${randomBytes(4).toString('hex')}:`;
  const opened: RedisArrivalRelay[] = [];
  const processOf = async () => {
    const arrivals = new Arrivals();
    const relay = await RedisArrivalRelay.open({
      url: REDIS_URL,
      namespace,
      arrivals,
      logger: createLogger('silent'),
      helloEveryMs: HOUR_MS,
    });
    opened.push(relay);
    return { arrivals, relay };
  };
  /**
   * `writer` writes `id` of `source` (told to its relay as its ingest tells it) again and again
   * until `heard` holds it, for up to 20 s; asserts that it did. A write is sent only to the
   * processes `writer` knows to have viewers then, so the first ones may go nowhere.
   */
  const assertReaches = async (writer: { relay: RedisArrivalRelay }, source: string, id: string, heard: string[]) => {
    const reached = await eventually(
      () => {
        writer.relay.publish(source, [{ id, micros: BigInt(Date.now()) * 1000n }], 0);
        return heard.includes(id);
      },
      20_000,
      100,
    );
    assert.ok(reached, `the viewer heard ${JSON.stringify(heard)}`);
  };

  after(async () => {
    await Promise.all(opened.map((r) => r.close()));
  });

  it('when the last viewer of a source leaves and another arrives at once, then the new one hears the other processes', async () => {
    const writer = await processOf();
    const viewer = await processOf();
    const source = 'arrivals.rejoin';
    const heard: string[] = [];
    const stopFirst = await viewer.arrivals.listen(source, () => undefined);
    // The console reopening its tail with a new filter: the old stream closes as the new one opens.
    stopFirst();
    const stop = await viewer.arrivals.listen(source, (rows) => heard.push(...rows.map((r) => r.id)));
    try {
      // The viewer's hello is heard by the writer at once (no periodic hello here).
      await assertReaches(writer, source, 'again', heard);
    } finally {
      stop();
    }
  });

  it('when a process starts after a viewer, then its writes reach that viewer once it has asked who listens', async () => {
    const viewer = await processOf();
    const source = 'arrivals.late';
    const heard: string[] = [];
    const stop = await viewer.arrivals.listen(source, (rows) => heard.push(...rows.map((r) => r.id)));
    try {
      await assertReaches(await processOf(), source, 'late', heard);
    } finally {
      stop();
    }
  });
});
