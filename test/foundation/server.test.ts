import assert from 'node:assert/strict';
import { createHttpServer } from '../../src/http/server.js';
import { testApp } from '../support/http.js';
import { listenLocally } from '../support/net.js';

describe('HTTP server limits', () => {
  it('when a GET carries a sandboxed sql of about 90 KB in its query string, then it is served, not refused with a bare 431', async () => {
    const { app, keys } = await testApp();
    const server = createHttpServer(app);
    const { base } = await listenLocally(server);
    try {
      const sql = `select count(*) as n from edge_logs /* ${'x'.repeat(90_000)} */`;
      const url = `${base}/api/endpoints/query/logs.all?project=none&sql=${encodeURIComponent(sql)}`;
      const res = await fetch(url, { headers: { 'X-API-KEY': keys.query } });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { result: [{ n: 0 }] });
    } finally {
      server.close();
    }
  });
});
