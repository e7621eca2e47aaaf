/**
 * One key per request for authentication and for the rate limit (src/auth/authenticate.ts,
 * requestKey): a percent-encoded `api_key` parameter name is the key to both, so it cannot
 * authenticate while escaping the limit (issue 25, finding 3).
 */
import assert from 'node:assert/strict';
import { generateKey } from '../../src/auth/keys.js';
import { servedTestApp } from '../support/http.js';

describe('the api_key parameter, however it is spelled, is limited like the key it is', function () {
  this.timeout(30_000);
  const t = servedTestApp();

  /** A fresh key allowed one request per second, with no burst beyond it. */
  const limitedKey = async (scope: 'query' | 'ingest'): Promise<string> => {
    const key = generateKey();
    await t.context.keys.create(`url-key-${scope}-${Date.now()}`, key, [scope], { rate_limit_per_second: 1, rate_limit_burst: 1 });
    return key;
  };

  const spellings: [string, (key: string) => string][] = [
    ['api%5Fkey', (key) => `api%5Fkey=${key}`],
    ['%61pi_key', (key) => `%61pi_key=${key}`],
    ['api%5Fkey=REAL&api_key=junk', (key) => `api%5Fkey=${key}&api_key=junk${key}`],
  ];
  for (const [what, param] of spellings) {
    it(`when a query key limited to 1/s is sent as ${what} 10 times at once, then it authenticates and at most 2 get through`, async () => {
      const key = await limitedKey('query');
      const url = `${t.base}/api/endpoints/query/usage.api-counts?interval=hourly&project=url-key&${param(key)}`;
      const statuses = (await Promise.all(Array.from({ length: 10 }, () => fetch(url).then((r) => r.status)))).sort();
      assert.ok(statuses.includes(200), `authenticated: ${statuses.join(',')}`);
      assert.ok(statuses.filter((s) => s === 429).length >= 8, `limited: ${statuses.join(',')}`);
      assert.ok(!statuses.includes(401), `one key for both: ${statuses.join(',')}`);
    });
  }

  it('when an ingest key limited to 1/s is sent as api%5Fkey, then it is limited too', async () => {
    const key = await limitedKey('ingest');
    const url = `${t.base}/api/logs?source_name=cloudflare.logs.prod&api%5Fkey=${key}`;
    const post = () =>
      fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"event_message": "url-key"}' }).then(
        (r) => r.status,
      );
    const statuses = (await Promise.all(Array.from({ length: 10 }, post))).sort();
    assert.ok(statuses.includes(200), `authenticated: ${statuses.join(',')}`);
    assert.ok(statuses.filter((s) => s === 429).length >= 8, `limited: ${statuses.join(',')}`);
  });
});
