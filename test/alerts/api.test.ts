import assert from 'node:assert/strict';
import request from 'supertest';
import { insertEvents } from '../support/db.js';
import { withKey } from '../support/http.js';
import { alertTestApp, type AlertTestApp } from './support.js';
import { Receiver } from './receiver.js';

const MARK = `alert-api-${Date.now()}`;
const FINDS = `select event_message, m.level from \`postgres.logs\` cross join unnest(metadata) as m where event_message = '${MARK}'`;
const FINDS_NONE = `select event_message from \`postgres.logs\` where event_message = '${MARK}-none'`;

describe('Alerts: /api/alerts', () => {
  let t: AlertTestApp;
  let receiver: Receiver;
  const admin = () => withKey(t.app, t.admin);

  before(async function () {
    this.timeout(90_000); // a database and a second service instance on it, on a shared machine
    t = await alertTestApp();
    receiver = await Receiver.start();
    await insertEvents('postgres.logs', [
      { event_message: MARK, metadata: { level: 'error' } },
      { event_message: MARK, metadata: { level: 'fatal' } },
    ]);
    await t.context.sources.reload();
  });
  after(async () => {
    await receiver?.close();
    await t?.close();
  });

  it("when an alert is created, then 201 in the original's shape (token, language, cron, both URLs, enabled) and it reads back by id, token and name", async () => {
    const body = {
      name: 'api errors',
      description: 'errors in postgres',
      query: FINDS,
      cron: '*/5 * * * *',
      webhook_notification_url: receiver.url('/a'),
      slack_hook_url: null,
    };
    const created = (await admin().post('/api/alerts', body).expect(201)).body;
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.equal(created.token, created.id);
    for (const [k, v] of Object.entries(body)) assert.deepEqual(created[k], v, k);
    assert.equal(created.language, 'bq_sql');
    assert.equal(created.enabled, true);
    assert.equal(created.next_runs.length, 3);
    assert.equal(new Date(created.next_runs[1]).getTime() - new Date(created.next_runs[0]).getTime(), 300_000);
    for (const path of [created.id, 'api%20errors'])
      assert.equal((await admin().get(`/api/alerts/${path}`).expect(200)).body.id, created.id);
    assert.ok((await admin().get('/api/alerts').expect(200)).body.some((a: { id: string }) => a.id === created.id));
  });

  it('when an alert is changed, then PUT answers it and PATCH 204, each changing only the fields sent; DELETE removes it and its history', async () => {
    const { id } = (await admin().post('/api/alerts', { name: 'api change', query: FINDS, cron: '0 * * * *' }).expect(201)).body;
    const put = (await admin().put(`/api/alerts/${id}`, { description: 'now described' }).expect(200)).body;
    assert.equal(put.description, 'now described');
    assert.equal(put.cron, '0 * * * *');
    await admin().patch(`/api/alerts/${id}`, { enabled: false }).expect(204);
    const got = (await admin().get(`/api/alerts/${id}`).expect(200)).body;
    assert.equal(got.enabled, false);
    assert.equal(got.description, 'now described');
    assert.deepEqual(got.next_runs, []);
    await admin().post(`/api/alerts/${id}/run`).expect(200);
    await admin().delete(`/api/alerts/${id}`).expect(204);
    await admin().get(`/api/alerts/${id}`).expect(404);
    await admin().get(`/api/alerts/${id}/runs`).expect(404);
    assert.equal((await t.context.db.pool.query('select count(*)::int as n from alert_runs where alert_id = $1', [id])).rows[0].n, 0);
  });

  it('when a definition cannot be used, then 422 at the field: query (line:column), cron, too often, @parameters, language, URLs, unknown field', async () => {
    const base = { name: 'api bad', query: FINDS, cron: '*/5 * * * *' };
    const problem = async (body: object) => {
      const res = await admin().post('/api/alerts', body).expect(422);
      assert.equal(res.body.error.status, 'FAILED_PRECONDITION');
      return res.body.error.errors[0] as { location: string; reason: string; message: string };
    };
    assert.equal((await problem({ ...base, query: 'select x from `no.such.source`' })).location, 'query:1:15');
    assert.equal((await problem({ ...base, query: 'selec 1' })).location.startsWith('query:1:'), true);
    assert.equal((await problem({ ...base, cron: 'every minute' })).location, 'cron');
    assert.equal((await problem({ ...base, cron: '61 * * * *' })).location, 'cron');
    const fast = await alertTestApp({ ALERT_MIN_INTERVAL_SECONDS: '300' });
    try {
      const res = await withKey(fast.app, fast.admin)
        .post('/api/alerts', { ...base, cron: '* * * * *' })
        .expect(422);
      assert.match(res.body.error.errors[0].message, /more often than every 300 s/);
    } finally {
      await fast.close();
    }
    assert.equal((await problem({ ...base, query: `${FINDS} and project = @project` })).reason, 'parametersNotAllowed');
    assert.equal((await problem({ ...base, language: 'lql' })).location, 'language');
    assert.equal((await problem({ ...base, webhook_notification_url: 'ftp://example.com/x' })).location, 'webhook_notification_url');
    // 127.0.0.1 is listed in this instance; 10.0.0.1 and [::1] are not.
    assert.equal((await problem({ ...base, webhook_notification_url: 'http://10.0.0.1/hook' })).location, 'webhook_notification_url');
    assert.equal((await problem({ ...base, slack_hook_url: 'http://[::1]:9/hook' })).location, 'slack_hook_url');
    assert.equal((await problem({ ...base, backends: [] })).reason, 'unknownField');
    assert.equal((await problem({ query: FINDS, cron: '* * * * *' })).location, 'name');
    await admin().post('/api/alerts', [1]).expect(400);
    await admin().get('/api/alerts/no-such-alert').expect(404);
  });

  it('when the name is taken, then 409', async () => {
    await admin().post('/api/alerts', { name: 'api dup', query: FINDS, cron: '0 * * * *' }).expect(201);
    await admin().post('/api/alerts', { name: 'api dup', query: FINDS, cron: '0 * * * *' }).expect(409);
  });

  it('when the key is not admin, then 403; without a key 401', async () => {
    await request(t.app).get('/api/alerts').expect(401);
    const query = (await import('../../src/auth/keys.js')).generateKey();
    await t.context.keys.create('alerts-query', query, ['query']);
    await request(t.app).get('/api/alerts').set('X-API-KEY', query).expect(403);
  });

  it('when an alert that finds rows is run now, then the webhook gets {alert, fired_at, rows, row_count} and the history shows the run', async () => {
    const hook = await Receiver.start();
    try {
      const { id } = (
        await admin()
          .post('/api/alerts', { name: 'api run', query: FINDS, cron: '0 * * * *', webhook_notification_url: hook.url() })
          .expect(201)
      ).body;
      const run = (await admin().post(`/api/alerts/${id}/run`).expect(200)).body;
      assert.equal(run.outcome, 'fired');
      assert.equal(run.delivery, 'delivered');
      assert.equal(run.row_count, 2);
      assert.equal(run.trigger, 'manual');
      assert.equal(hook.received.length, 1);
      const sent = hook.received[0];
      assert.equal(sent.headers['content-type'], 'application/json');
      assert.equal(sent.headers['idempotency-key'], run.id);
      const body = sent.body as { alert: object; fired_at: string; rows: Array<{ level: string }>; row_count: number };
      assert.deepEqual(body.alert, { id, name: 'api run' });
      assert.ok(!Number.isNaN(Date.parse(body.fired_at)));
      assert.equal(body.row_count, 2);
      assert.deepEqual(body.rows.map((r) => r.level).sort(), ['error', 'fatal']);
      const runs = (await admin().get(`/api/alerts/${id}/runs`).expect(200)).body;
      assert.equal(runs.length, 1);
      assert.equal(runs[0].id, run.id);
      assert.equal(typeof runs[0].duration_ms, 'number');
      assert.deepEqual(
        runs[0].deliveries.map((d: { target: string; status: string }) => [d.target, d.status]),
        [['webhook', 'delivered']],
      );
      assert.equal(runs[0].owner, undefined);
    } finally {
      await hook.close();
    }
  });

  it('when the query finds no rows, then nothing is sent and the run says no_rows', async () => {
    const hook = await Receiver.start();
    try {
      const { id } = (
        await admin()
          .post('/api/alerts', { name: 'api none', query: FINDS_NONE, cron: '0 * * * *', webhook_notification_url: hook.url() })
          .expect(201)
      ).body;
      const run = (await admin().post(`/api/alerts/${id}/run`).expect(200)).body;
      assert.equal(run.outcome, 'no_rows');
      assert.equal(run.delivery, 'none');
      assert.equal(run.row_count, 0);
      assert.equal(hook.received.length, 0);
    } finally {
      await hook.close();
    }
  });

  it('when the receiver answers 500, 500 and then 200, then exactly one successful delivery, and the history shows the retries', async () => {
    const hook = await Receiver.start([500, 500]);
    try {
      const { id } = (
        await admin()
          .post('/api/alerts', { name: 'api retry', query: FINDS, cron: '0 * * * *', webhook_notification_url: hook.url() })
          .expect(201)
      ).body;
      const run = (await admin().post(`/api/alerts/${id}/run`).expect(200)).body;
      assert.equal(run.delivery, 'delivered');
      assert.deepEqual(
        hook.received.map((r) => r.status),
        [500, 500, 200],
      );
      assert.equal(hook.delivered.length, 1);
      const [history] = (await admin().get(`/api/alerts/${id}/runs`).expect(200)).body;
      assert.deepEqual(
        history.deliveries[0].attempts.map((a: { status: number }) => a.status),
        [500, 500, 200],
      );
    } finally {
      await hook.close();
    }
  });

  it('when every attempt fails, then it stops at ALERT_DELIVERY_ATTEMPTS and the failure is recorded; a 4xx is not retried', async () => {
    const hook = await Receiver.start([503, 503, 503, 503]);
    const slack = await Receiver.start([404]);
    try {
      const { id } = (
        await admin()
          .post('/api/alerts', {
            name: 'api fail',
            query: FINDS,
            cron: '0 * * * *',
            webhook_notification_url: hook.url(),
            slack_hook_url: slack.url('/services/x'),
          })
          .expect(201)
      ).body;
      const run = (await admin().post(`/api/alerts/${id}/run`).expect(200)).body;
      assert.equal(run.outcome, 'fired');
      assert.equal(run.delivery, 'failed');
      assert.equal(hook.received.length, 3);
      assert.equal(slack.received.length, 1);
      const byTarget = Object.fromEntries(run.deliveries.map((d: { target: string }) => [d.target, d]));
      assert.equal(byTarget.webhook.status, 'failed');
      assert.deepEqual(
        byTarget.webhook.attempts.map((a: { status: number }) => a.status),
        [503, 503, 503],
      );
      assert.equal(byTarget.slack.attempts.length, 1);
    } finally {
      await hook.close();
      await slack.close();
    }
  });

  it("when an alert posts to Slack, then the message is Slack's incoming-webhook format: text and blocks naming the alert and the rows", async () => {
    const slack = await Receiver.start();
    try {
      const { id } = (
        await admin()
          .post('/api/alerts', { name: 'api slack', query: FINDS, cron: '0 * * * *', slack_hook_url: slack.url('/services/T/B/x') })
          .expect(201)
      ).body;
      await admin().post(`/api/alerts/${id}/run`).expect(200);
      assert.equal(slack.received.length, 1);
      const msg = slack.received[0].body as { text: string; blocks: Array<{ type: string; text?: { type: string; text: string } }> };
      assert.equal(msg.text, 'api slack: 2 rows');
      assert.equal(msg.blocks[0].type, 'section');
      assert.match(msg.blocks[0].text!.text, /\*api slack\*, 2 rows/);
      assert.equal(msg.blocks.length, 3);
      assert.ok(
        msg.blocks.slice(1).every((b) => b.text!.type === 'mrkdwn' && b.text!.text.startsWith('```') && b.text!.text.includes(MARK)),
      );
    } finally {
      await slack.close();
    }
  });

  it('when a query is previewed, then its rows and count, and nothing is saved or sent; a bad query is 422 at the query', async () => {
    const res = (await admin().post('/api/alerts/preview', { query: FINDS }).expect(200)).body;
    assert.equal(res.row_count, 2);
    assert.equal(res.rows[0].event_message, MARK);
    const bad = await admin().post('/api/alerts/preview', { query: 'select 1 from `no.such.source`' }).expect(422);
    assert.match(bad.body.error.errors[0].location, /^query:1:/);
  });

  it('when the receiver redirects, then the redirect is not followed and the delivery fails', async () => {
    const hook = await Receiver.start([{ status: 302, headers: { Location: 'http://127.0.0.1:1/elsewhere' } }]);
    try {
      const { id } = (
        await admin()
          .post('/api/alerts', { name: 'api redirect', query: FINDS, cron: '0 * * * *', webhook_notification_url: hook.url() })
          .expect(201)
      ).body;
      const run = (await admin().post(`/api/alerts/${id}/run`).expect(200)).body;
      assert.equal(run.delivery, 'failed');
      assert.equal(hook.received.length, 1);
      assert.match(run.deliveries[0].attempts[0].error, /redirects are not followed/);
    } finally {
      await hook.close();
    }
  });
});
