import assert from 'node:assert/strict';
import { AlertScheduler } from '../../src/alerts/scheduler.js';
import { createLogger } from '../../src/logger.js';
import { withKey } from '../support/http.js';
import { sleep } from '../support/wait.js';
import { alertTestApp, ownAlertDatabase, type AlertTestApp } from './support.js';
import { Receiver } from './receiver.js';

const MARK = `alert-scheduled-${Date.now()}`;
const FINDS = `select event_message from \`postgres.logs\` where event_message = '${MARK}'`;
const FINDS_NONE = `select event_message from \`postgres.logs\` where event_message = '${MARK}-none'`;
const LEASE_MS = 1000;

/**
 * The scheduler of two service instances ("processes") on one database of their own, their clock
 * moved by hand (`tick(now)`): each due time runs once across them, a run whose process died is
 * carried on by the other without sending anything twice.
 */
describe('Alerts: the schedule', () => {
  let a: AlertTestApp;
  let b: AlertTestApp;
  let receiver: Receiver;
  const schedulerOf = (t: AlertTestApp) =>
    new AlertScheduler(t.context.alerts, createLogger('silent'), { tick: '* * * * *', leaseMs: LEASE_MS });
  const admin = () => withKey(a.app, a.admin);
  const create = async (body: object) =>
    (
      await admin()
        .post('/api/alerts', { cron: '* * * * *', ...body })
        .expect(201)
    ).body as { id: string; created_at: string };
  const runsOf = async (id: string) => (await admin().get(`/api/alerts/${id}/runs`).expect(200)).body as Array<Record<string, unknown>>;
  /** A minute after the alert was created, on the minute: its first due time has come. */
  const firstDue = (alert: { created_at: string }) => Math.floor(Date.parse(alert.created_at) / 60_000) * 60_000 + 60_000;

  before(async function () {
    this.timeout(120_000);
    const url = await ownAlertDatabase();
    a = await alertTestApp({}, url);
    b = await alertTestApp({}, url);
    receiver = await Receiver.start();
    await admin()
      .post('/api/logs?source_name=postgres.logs', [{ event_message: MARK }, { event_message: MARK }])
      .expect(200);
    await a.context.sources.reload();
  });
  after(async () => {
    await receiver?.close();
    await a?.close();
    await b?.close();
  });
  afterEach(async () => {
    for (const alert of (await admin().get('/api/alerts').expect(200)).body as Array<{ id: string }>)
      await admin().delete(`/api/alerts/${alert.id}`).expect(204);
    receiver.received.length = 0;
  });

  it('when two processes tick at a due time, then the alert that finds rows is delivered once and the one that finds none sends nothing', async () => {
    const finds = await create({ name: 'sched finds', query: FINDS, webhook_notification_url: receiver.url('/finds') });
    const none = await create({ name: 'sched none', query: FINDS_NONE, webhook_notification_url: receiver.url('/none') });
    const now = firstDue(finds) + 500;
    // Before its first due time nothing runs.
    await schedulerOf(a).tick(firstDue(finds) - 1000);
    assert.equal((await runsOf(finds.id)).length, 0);
    await Promise.all([schedulerOf(a).tick(now), schedulerOf(b).tick(now)]);
    assert.deepEqual(
      receiver.received.map((r) => r.path),
      ['/finds'],
    );
    const [run] = await runsOf(finds.id);
    assert.equal(run.outcome, 'fired');
    assert.equal(run.delivery, 'delivered');
    assert.equal(run.trigger, 'schedule');
    assert.equal(Date.parse(run.scheduled_for as string), firstDue(finds));
    assert.equal(((await runsOf(none.id))[0] as { outcome: string }).outcome, 'no_rows');
    // Later ticks within the same minute find the due time taken.
    await Promise.all([schedulerOf(a).tick(now + 20_000), schedulerOf(b).tick(now + 30_000)]);
    assert.equal(receiver.received.length, 1);
    assert.equal((await runsOf(finds.id)).length, 1);
    // The next minute is a new due time.
    await schedulerOf(b).tick(now + 60_000);
    assert.equal(receiver.delivered.length, 2);
  });

  it('when the process of a run dies after the webhook and before Slack, then another carries it on: Slack once, the webhook not again', async () => {
    const slack = await Receiver.start();
    try {
      const alert = await create({
        name: 'sched resume',
        query: FINDS,
        webhook_notification_url: receiver.url('/hook'),
        slack_hook_url: slack.url('/slack'),
      });
      const due = new Date(firstDue(alert));
      // What a process records up to its death: the claim, the rows, the webhook delivered.
      const runs = a.context.alerts.runs;
      const claimed = (await runs.claimTick(alert.id, due, 'dead-process', LEASE_MS))!;
      const rows = [{ event_message: MARK }, { event_message: MARK }];
      await runs.record(claimed.id, 'dead-process', { row_count: 2, rows, delivery: 'pending' });
      await runs.record(claimed.id, 'dead-process', {
        deliveries: [
          { target: 'webhook', host: 'x', status: 'delivered', attempts: [{ at: new Date().toISOString(), status: 200, ms: 1 }] },
        ],
      });
      // While its lease holds, nobody takes it; the due time is not claimed again either.
      await schedulerOf(b).tick(due.getTime() + 100);
      assert.equal(slack.received.length, 0);
      await sleep(LEASE_MS + 200);
      await schedulerOf(b).tick(due.getTime() + 2000);
      assert.equal(receiver.received.length, 0, 'the webhook is not sent again');
      assert.equal(slack.received.length, 1);
      assert.match(JSON.stringify(slack.received[0].body), /2 rows/);
      const all = await runsOf(alert.id);
      assert.equal(all.length, 1);
      assert.equal(all[0].outcome, 'fired');
      assert.equal(all[0].delivery, 'delivered');
      // Ticks after it change nothing.
      await Promise.all([schedulerOf(a).tick(due.getTime() + 3000), schedulerOf(b).tick(due.getTime() + 3000)]);
      assert.equal(slack.received.length, 1);
    } finally {
      await slack.close();
    }
  });

  it('when the process of a run dies before its query, then the tick is not skipped: another runs and delivers it once', async () => {
    const alert = await create({ name: 'sched early death', query: FINDS, webhook_notification_url: receiver.url('/late') });
    const due = new Date(firstDue(alert));
    await a.context.alerts.runs.claimTick(alert.id, due, 'dead-process', LEASE_MS);
    await sleep(LEASE_MS + 200);
    await Promise.all([schedulerOf(a).tick(due.getTime() + 2000), schedulerOf(b).tick(due.getTime() + 2000)]);
    assert.equal(receiver.received.length, 1);
    const [run] = await runsOf(alert.id);
    assert.equal(run.outcome, 'fired');
    assert.equal(run.row_count, 2);
  });
});
