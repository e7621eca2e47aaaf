import assert from 'node:assert/strict';
import request from 'supertest';
import { redactString, redactValue } from '../../src/query/redact.js';
import { EndpointRepository } from '../../src/endpoints/repository.js';
import { insertEvents } from '../support/db.js';
import { testApp } from '../support/http.js';

describe('PII redaction', () => {
  describe('of strings', () => {
    const cases: Array<[string, string]> = [
      ['GET | 200 | 37.5.20.48 | x', 'GET | 200 | REDACTED | x'],
      ['from 127.0.0.1:5432.', 'from REDACTED:5432.'],
      ['full 2001:0db8:85a3:0000:0000:8a2e:0370:7334 end', 'full REDACTED end'],
      ['compressed [2001:db8::1]:8080', 'compressed [REDACTED]:8080'],
      ['loopback ::1.', 'loopback REDACTED.'],
      ['mapped ::ffff:192.168.1.1 ok', 'mapped REDACTED ok'],
      ['node realtime@fdaa:0:cc:a7b:bada:5:2795:2', 'node realtime@REDACTED'],
      ['version 1.2.3.4.5', 'version 1.2.3.4.5'],
      ['v1.2.3.4.5', 'v1.2.3.4.5'],
      ['deadbeef cafe', 'deadbeef cafe'],
      ['at 12:30:45 and 2023-03-23T14:36:26Z', 'at 12:30:45 and 2023-03-23T14:36:26Z'],
      ['mac aa:bb:cc:dd:ee:ff', 'mac aa:bb:cc:dd:ee:ff'],
      ['std::vector<int>', 'std::vector<int>'],
      ['not an address 999.1.1.1', 'not an address 999.1.1.1'],
    ];
    for (const [input, output] of cases) {
      it(`when redacting ${JSON.stringify(input)}, then ${JSON.stringify(output)}`, () => assert.equal(redactString(input), output));
    }

    it('when redacting a nested value, then only strings change, at any depth; keys, numbers and booleans stay', () => {
      const value = { '10.0.0.1': [{ ip: '10.0.0.2', n: 10, ok: true, deep: [{ s: 'x 8.8.8.8' }] }] };
      assert.deepEqual(redactValue(value), { '10.0.0.1': [{ ip: 'REDACTED', n: 10, ok: true, deep: [{ s: 'x REDACTED' }] }] });
    });
  });

  describe('over HTTP', () => {
    const tag = `pii${Date.now().toString(36)}`;
    before(() =>
      insertEvents('cloudflare.logs.prod', [
        {
          id: `${tag}-1`,
          project: tag,
          event_message: 'GET | 200 | 37.5.20.48 | from 2001:db8::7',
          metadata: { request: { headers: { x_real_ip: '31.4.240.48', cf_connecting_ip: '::ffff:10.1.2.3' } } },
        },
      ]),
    );
    const sql = `select event_message, metadata from edge_logs`;

    it('when the header LF-ENDPOINT-REDACT-PII is true, then addresses in every string are redacted', async () => {
      const { app, keys } = await testApp();
      const res = await request(app)
        .get('/api/endpoints/query/logs.all')
        .query({ project: tag, sql })
        .set('X-API-KEY', keys.query)
        .set('LF-ENDPOINT-REDACT-PII', 'true');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.result, [
        {
          event_message: 'GET | 200 | REDACTED | from REDACTED',
          metadata: [{ request: [{ headers: [{ x_real_ip: 'REDACTED', cf_connecting_ip: 'REDACTED' }] }] }],
        },
      ]);
    });

    it('when the header is absent or false, then rows are not redacted', async () => {
      const { app, keys } = await testApp();
      for (const header of [undefined, 'false']) {
        const req = request(app).get('/api/endpoints/query/logs.all').query({ project: tag, sql }).set('X-API-KEY', keys.query);
        const res = header ? await req.set('LF-ENDPOINT-REDACT-PII', header) : await req;
        assert.equal(res.body.result[0].event_message, 'GET | 200 | 37.5.20.48 | from 2001:db8::7');
      }
    });

    it('when the endpoint redacts by itself, then a header of false cannot turn it off, and cached answers never mix', async () => {
      const { app, keys, context } = await testApp();
      const repo = new EndpointRepository(context.db.knex);
      const base = (await repo.find('logs.all'))!;
      /** logs.all under another name, cached for a minute, redacting or not by itself. */
      const logsAllCopy = (name: string, redact_pii: boolean) =>
        repo.insert({
          name,
          query: base.query,
          parameters: base.parameters,
          description: '',
          max_rows: 1000,
          cache_duration_seconds: 60,
          cache_warming_seconds: null,
          sandboxable: true,
          redact_pii,
        });
      const endpoint = await logsAllCopy(`${tag}.redacting`, true);
      const res = await request(app)
        .get(`/api/endpoints/query/${endpoint.name}`)
        .query({ project: tag, sql })
        .set('X-API-KEY', keys.query)
        .set('LF-ENDPOINT-REDACT-PII', 'false');
      assert.equal(res.body.result[0].event_message, 'GET | 200 | REDACTED | from REDACTED');

      const cached = await logsAllCopy(`${tag}.cached`, false);
      const call = () => request(app).get(`/api/endpoints/query/${cached.name}`).query({ project: tag, sql }).set('X-API-KEY', keys.query);
      const plainFirst = await call();
      const redactedSecond = await call().set('LF-ENDPOINT-REDACT-PII', 'true');
      const plainThird = await call();
      assert.match(plainFirst.body.result[0].event_message, /37\.5\.20\.48/);
      assert.match(redactedSecond.body.result[0].event_message, /REDACTED/);
      assert.deepEqual(plainThird.body, plainFirst.body);
    });
  });
});
