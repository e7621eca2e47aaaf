import assert from 'node:assert/strict';
import { DestinationPolicy, isPublicAddress, postJson } from '../../src/alerts/destinations.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { Receiver } from './receiver.js';

/** ALERT_WEBHOOK_HOSTS (SECURITY.md, "Alert destinations"): what a delivery may connect to. */
describe('Alerts: where a webhook may go', () => {
  it('when the list is empty, then public addresses are allowed and loopback, private, link-local and mapped forms of them refused', () => {
    const open = new DestinationPolicy([]);
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) assert.ok(open.allows('example.com', address), address);
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254', // cloud metadata
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::10.0.0.1',
    ])
      assert.ok(!open.allows('example.com', address), address);
    assert.ok(!isPublicAddress('::ffff:192.168.0.1'));
  });

  it('when entries are listed, then only those (a name, an address, a range), plus any public address with "public"', () => {
    const listed = new DestinationPolicy(['127.0.0.1', '10.1.0.0/16', 'hooks.internal']);
    assert.ok(listed.allows('x', '127.0.0.1'));
    assert.ok(listed.allows('x', '::ffff:127.0.0.1'));
    assert.ok(listed.allows('x', '10.1.200.3'));
    assert.ok(!listed.allows('x', '10.2.0.1'));
    assert.ok(!listed.allows('x', '127.0.0.2'));
    assert.ok(listed.allows('hooks.internal', '192.168.7.7'), "a listed name: its addresses are the admin's choice");
    assert.ok(!listed.allows('x', '8.8.8.8'), 'a list without "public" allows only what it lists');
    const withPublic = new DestinationPolicy(['public', '10.0.0.5']);
    assert.ok(withPublic.allows('x', '8.8.8.8'));
    assert.ok(withPublic.allows('x', '10.0.0.5'));
    assert.ok(!withPublic.allows('x', '10.0.0.6'));
  });

  it('when a name resolves to loopback, then the delivery is refused before connecting: the resolved address is checked, not the name', async () => {
    const receiver = await Receiver.start();
    try {
      const port = new URL(receiver.base).port;
      await assert.rejects(
        postJson(new DestinationPolicy([]), `http://localhost:${port}/hook`, {}, { timeoutMs: 1000 }),
        /not allowed by ALERT_WEBHOOK_HOSTS/,
      );
      await assert.rejects(postJson(new DestinationPolicy([]), `http://127.0.0.1:${port}/hook`, {}, { timeoutMs: 1000 }), /not allowed/);
      await assert.rejects(
        postJson(new DestinationPolicy(['public']), `http://[::ffff:127.0.0.1]:${port}/hook`, {}, { timeoutMs: 1000 }),
        /not allowed/,
      );
      assert.equal(receiver.received.length, 0);
      // Listed by address: a name resolving to it is allowed, and the connection goes to that address.
      const answer = await postJson(new DestinationPolicy(['127.0.0.1']), `http://localhost:${port}/hook`, { a: 1 }, { timeoutMs: 1000 });
      assert.equal(answer.status, 200);
      assert.deepEqual(receiver.received[0].body, { a: 1 });
    } finally {
      await receiver.close();
    }
  });

  it('when a saved URL is checked, then not http(s) and refused addresses are problems; names wait for delivery', () => {
    const open = new DestinationPolicy([]);
    assert.match(open.urlProblem('file:///etc/passwd')!, /http/);
    assert.match(open.urlProblem('http://169.254.169.254/latest')!, /does not allow/);
    assert.equal(open.urlProblem('https://hooks.slack.com/services/T/B/x'), undefined);
    assert.match(new DestinationPolicy(['hooks.internal']).urlProblem('http://example.com/')!, /not in ALERT_WEBHOOK_HOSTS/);
    assert.equal(new DestinationPolicy(['hooks.internal']).urlProblem('http://hooks.internal/x'), undefined);
    // A name may resolve to a listed address: known only when sending.
    assert.equal(new DestinationPolicy(['127.0.0.1']).urlProblem('http://localhost:9/'), undefined);
  });

  it('when ALERT_WEBHOOK_HOSTS has an entry that is not a name, address or range, then the start fails naming it', () => {
    assert.deepEqual(loadConfig({ ALERT_WEBHOOK_HOSTS: ' 127.0.0.1, 10.0.0.0/8 ,Hooks.Internal,public' }).alertWebhookHosts, [
      '127.0.0.1',
      '10.0.0.0/8',
      'hooks.internal',
      'public',
    ]);
    for (const bad of ['http://x', '10.0.0.0/33', 'a b', '1.2.3.4/8/2'])
      assert.throws(
        () => loadConfig({ ALERT_WEBHOOK_HOSTS: bad }),
        (e: Error) => e instanceof ConfigError && /ALERT_WEBHOOK_HOSTS/.test(e.message),
      );
  });
});
