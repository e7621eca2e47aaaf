import { openTail } from '../support/tail.js';
import { eventually } from '../support/wait.js';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { generateKey } from '../../src/auth/keys.js';
import { createEmptyDatabase, dropDatabase } from '../support/db.js';
import { OwnRedis, sleep, startService, type ServiceProcess } from './support.js';

/**
 * Live tail across service processes on one REDIS_URL (src/lql/arrivals.ts): an event ingested
 * through process A reaches a viewer on process B, and on a process started after the viewer;
 * nothing goes through Redis for a source nobody tails.
 */
describe('live tail across service processes on one Redis', function () {
  this.timeout(300_000);
  const adminKey = generateKey();
  const source = 'tail.processes';
  let redis: OwnRedis;
  let database: { url: string; name: string };
  const services: ServiceProcess[] = [];
  const env = () => ({ DATABASE_URL: database.url, REDIS_URL: redis.url, ADMIN_API_KEY: adminKey });

  const call = (service: ServiceProcess, path: string, body?: unknown) =>
    fetch(service.base + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'X-API-KEY': adminKey, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const ingest = async (service: ServiceProcess, events: object[]) =>
    assert.equal((await call(service, `/api/logs?source_name=${source}`, events)).status, 200);

  /** A viewer: the event messages it has been sent, once the service says it listens. */
  async function tail(service: ServiceProcess, lql: string): Promise<{ messages: string[]; close(): void }> {
    const messages: string[] = [];
    const stream = await openTail(service.base, source, adminKey, lql, (events) => messages.push(...events.map((e) => e.event_message)));
    return { messages, close: stream.close };
  }

  before(async () => {
    redis = await OwnRedis.start();
    database = await createEmptyDatabase('lq_tail_procs');
    services.push(await startService(env(), { readyTimeoutMs: 120_000 })); // migrates first
    services.push(await startService(env(), { readyTimeoutMs: 120_000 }));
    assert.equal((await call(services[0], '/api/sources', { name: source })).status, 201);
  });
  after(async () => {
    await Promise.all(services.map((s) => s.kill()));
    await redis?.kill();
    if (database) await dropDatabase(database.name);
  });

  it('when nobody tails the source, then its ingest publishes nothing on Redis', async () => {
    const spy = createClient({ url: redis.url });
    await spy.connect();
    const heard: string[] = [];
    await spy.subscribe(`lq:tail:events:${source}`, (message) => heard.push(message));
    try {
      await ingest(services[0], [{ message: 'nobody watches error' }]);
      await ingest(services[1], [{ message: 'nobody watches either error' }]);
      await sleep(500);
      assert.deepEqual(heard, []);
    } finally {
      await spy.close();
    }
  });

  it('when an event is ingested through A, then the viewer on B gets exactly the matching ones', async () => {
    const viewer = await tail(services[1], 'error');
    try {
      await ingest(services[0], [
        { message: 'from A 1 error' },
        { message: 'from A 1 fine' },
        { message: 'from A 2 error' },
        { message: 'from A 2 fine' },
      ]);
      await ingest(services[1], [{ message: 'from B error' }, { message: 'from B fine' }]);
      await eventually(() => viewer.messages.length >= 3, 10_000);
      await sleep(1500); // a wrong extra row would come with the next query
      assert.deepEqual([...viewer.messages].sort(), ['from A 1 error', 'from A 2 error', 'from B error']);
    } finally {
      viewer.close();
    }
  });

  it('when a process starts after the viewer, then what it ingests reaches the viewer too', async () => {
    const viewer = await tail(services[1], 'late');
    try {
      services.push(await startService(env(), { readyTimeoutMs: 120_000 }));
      // Its question "who tails what?" and the answers take a moment on a loaded machine: probe
      // until one of its events reaches the viewer, then check what follows.
      for (let i = 0; !viewer.messages.some((m) => m.startsWith('late probe')) && i < 40; i++) {
        await ingest(services[2], [{ message: `late probe ${i}` }]);
        await sleep(250);
      }
      await ingest(services[2], [{ message: 'late start' }, { message: 'other' }]);
      await eventually(() => viewer.messages.includes('late start'), 10_000);
      assert.deepEqual(
        viewer.messages.filter((m) => !m.startsWith('late probe')),
        ['late start'],
      );
    } finally {
      viewer.close();
    }
  });
});
