import assert from 'node:assert/strict';
import { generateKey } from '../../src/auth/keys.js';
import { createEmptyDatabase, dropDatabase } from '../support/db.js';
import { Receiver } from '../alerts/receiver.js';
import { eventually, startService, type ServiceProcess } from './support.js';

/**
 * The service killed (SIGKILL) while it delivers an alert, then started again: the run it had
 * claimed is resumed once its lease runs out and delivered once; its due time is neither skipped
 * nor run a second time (docs/ALERTS.md, "Schedule").
 */
describe('alerts: a process killed mid-run and restarted', function () {
  this.timeout(240_000);
  const adminKey = generateKey();
  let database: { url: string; name: string };
  let service: ServiceProcess | undefined;
  let receiver: Receiver;
  const env = () => ({
    DATABASE_URL: database.url,
    ADMIN_API_KEY: adminKey,
    ALERT_TICK: '* * * * * *',
    ALERT_MIN_INTERVAL_SECONDS: '1',
    ALERT_WEBHOOK_HOSTS: '127.0.0.1',
    ALERT_RUN_LEASE_MS: '3000',
    // The hung attempt must still be waiting when the process is killed.
    ALERT_DELIVERY_TIMEOUT_MS: '60000',
  });
  const call = async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await fetch(service!.base + path, {
      method: init.method ?? 'GET',
      headers: { 'X-API-KEY': adminKey, 'Content-Type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };

  before(async () => {
    database = await createEmptyDatabase('lq_alert_restart');
    receiver = await Receiver.start(['hang']);
    service = await startService(env(), { readyTimeoutMs: 90_000 });
  });
  after(async () => {
    await service?.kill();
    await receiver?.close();
    if (database) await dropDatabase(database.name);
  });

  it('when the process dies while a delivery waits for its answer, then after the restart that run is delivered once, and no due time twice', async () => {
    const events = [{ project: 'restart', event_message: 'restart alert' }];
    assert.equal((await call('/api/logs?source_name=cloudflare.logs.prod', { method: 'POST', body: events })).status, 200);
    const created = await call('/api/alerts', {
      method: 'POST',
      body: {
        name: 'restart alert',
        query: "select event_message from `cloudflare.logs.prod` where project = 'restart'",
        // Due twice a minute: the run killed and the next ones stay apart.
        cron: '*/30 * * * * *',
        webhook_notification_url: receiver.url(),
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { id } = created.body as { id: string };
    assert.ok(await eventually(() => receiver.received.length === 1, 45_000), 'the first due time was sent');
    const hung = receiver.received[0];
    const hungRun = hung.headers['idempotency-key'] as string;
    await service!.kill();

    service = await startService(env(), { readyTimeoutMs: 90_000 });
    const resumed = await eventually(() => receiver.delivered.some((r) => r.headers['idempotency-key'] === hungRun), 60_000, 200);
    assert.ok(resumed, 'the killed run is delivered after the restart');
    await call(`/api/alerts/${id}`, { method: 'PATCH', body: { enabled: false } });
    const runs = (await call(`/api/alerts/${id}/runs`)).body as Array<{
      id: string;
      scheduled_for: string;
      outcome: string;
      delivery: string;
    }>;
    const killed = runs.find((r) => r.id === hungRun)!;
    assert.equal(killed.outcome, 'fired');
    assert.equal(killed.delivery, 'delivered');
    assert.equal(killed.scheduled_for, (hung.body as { fired_at: string }).fired_at, 'the same due time, the same rows');
    // Each run delivered once; each due time one run.
    const deliveredKeys = receiver.delivered.map((r) => r.headers['idempotency-key']);
    assert.equal(new Set(deliveredKeys).size, deliveredKeys.length, deliveredKeys.join(', '));
    assert.equal(new Set(runs.map((r) => r.scheduled_for)).size, runs.length);
  });
});
