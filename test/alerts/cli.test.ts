import assert from 'node:assert/strict';
import { runCli } from '../../src/cli.js';
import { insertEvents, testDatabase } from '../support/db.js';
import { ALERT_ENV } from './support.js';
import { Receiver } from './receiver.js';

describe('CLI: alerts list|create|run', () => {
  let env: Record<string, string>;
  let receiver: Receiver;
  const mark = `alert-cli-${Date.now()}`;
  before(async () => {
    const { url } = await testDatabase();
    env = { DATABASE_URL: url, LOAD_DEMO_DATA: 'false', LOG_LEVEL: 'silent', ...ALERT_ENV };
    receiver = await Receiver.start();
    await insertEvents('postgres.logs', [{ event_message: mark }]);
  });
  after(() => receiver?.close());

  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const lines: string[] = [];
    const errors: string[] = [];
    const code = await runCli(argv, { env, out: (text) => lines.push(text), err: (text) => errors.push(text) });
    return { code, out: lines.join('\n'), err: errors.join('\n') };
  }

  it('when an alert is created, listed and run from the shell, then the run is delivered and printed', async () => {
    const query = `select event_message from \`postgres.logs\` where event_message = '${mark}'`;
    const created = await cli(
      'alerts',
      'create',
      '--name',
      'cli alert',
      '--cron',
      '*/10 * * * *',
      '--query',
      query,
      '--webhook',
      receiver.url(),
    );
    assert.equal(created.code, 0, created.err);
    const alert = JSON.parse(created.out) as { id: string; cron: string };
    assert.equal(alert.cron, '*/10 * * * *');
    assert.ok((JSON.parse((await cli('alerts', 'list')).out) as Array<{ id: string }>).some((a) => a.id === alert.id));
    const run = await cli('alerts', 'run', 'cli alert');
    assert.equal(run.code, 0, run.err);
    assert.equal(JSON.parse(run.out).delivery, 'delivered');
    assert.equal(receiver.delivered.length, 1);
    assert.equal((receiver.delivered[0].body as { row_count: number }).row_count, 1);
  });

  it('when the alert is invalid or the command incomplete, then the problem with its field, exit 1; usage errors exit 2', async () => {
    const bad = await cli('alerts', 'create', '--name', 'cli bad', '--cron', 'often', '--query', 'select 1');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^cron: /m);
    assert.equal((await cli('alerts', 'create', '--name', 'x')).code, 2);
    assert.equal((await cli('alerts', 'run')).code, 2);
    assert.equal((await cli('alerts', 'run', 'no such alert')).code, 1);
  });
});
