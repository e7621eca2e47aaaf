/**
 * Lookups of unknown API keys limited per client address (src/auth/unknownKeys.ts,
 * UNKNOWN_KEY_LOOKUPS_PER_MINUTE; issue 25, finding 10): each unknown key cost a database lookup,
 * without limit, and their cached answers pushed known keys out of the lookup cache. Two client
 * addresses are two loopback addresses (127.0.0.1 and 127.0.0.2) talking to one server.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { createApp } from '../../src/app.js';
import { Authenticator } from '../../src/auth/authenticate.js';
import { generateKey, type ApiKeyRepository } from '../../src/auth/keys.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { testConfig, testDatabase } from '../support/db.js';
import { listenLocally } from '../support/net.js';

const LIMIT = 20;

/** GET `path` from the local address `from`, with `key`. */
function get(
  port: number,
  path: string,
  key: string,
  from: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, localAddress: from, agent: false, headers: { 'X-API-KEY': key } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

/** A request as the pipeline sees it: only its socket's address is read. */
const from = (address: string) => ({ socket: { remoteAddress: address } }) as unknown as http.IncomingMessage;

describe('unknown API keys limited per client address', function () {
  this.timeout(120_000);
  let ctx: AppContext;
  let server: http.Server;
  let port: number;
  const valid = generateKey();

  before(async () => {
    const { url } = await testDatabase();
    ctx = await createContext(testConfig(url, { UNKNOWN_KEY_LOOKUPS_PER_MINUTE: String(LIMIT) }), createLogger('silent'));
    server = createHttpServer(await createApp(ctx));
    ({ port } = await listenLocally(server));
    await ctx.keys.create('unknown-keys-valid', valid, ['query']);
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await ctx.close();
  });

  it(`when one address sends more than ${LIMIT} unknown keys in a minute, then 429 with Retry-After; a valid key from another address still works`, async () => {
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < LIMIT + 5; i++) {
      const res = await get(port, '/api/endpoints', generateKey(), '127.0.0.1');
      statuses.push(res.status);
      if (res.status === 429) refused ??= res;
    }
    assert.deepEqual(statuses, [...Array<number>(LIMIT).fill(401), ...Array<number>(5).fill(429)]);
    assert.ok(Number(refused!.headers['retry-after']) >= 1 && Number(refused!.headers['retry-after']) <= 60);
    const body = JSON.parse(refused!.body) as { error: { code: number; errors: { reason: string }[] } };
    assert.equal(body.error.code, 429);
    assert.equal(body.error.errors[0].reason, 'unknownKeys');

    const other = await get(port, '/api/endpoints/query/no-such-endpoint', valid, '127.0.0.2');
    assert.equal(other.status, 404, other.body); // authenticated: the endpoint is what is missing
    // Unknown keys from the other address are still looked up (401, not 429).
    assert.equal((await get(port, '/api/endpoints', generateKey(), '127.0.0.2')).status, 401);
  });

  describe('the lookups behind it', () => {
    /** The real repository, counting its lookups. */
    function counting(keys: ApiKeyRepository): { repo: ApiKeyRepository; lookups: () => number } {
      let n = 0;
      const repo = Object.create(keys) as ApiKeyRepository;
      repo.findByKey = (key: string) => {
        n++;
        return keys.findByKey(key);
      };
      return { repo, lookups: () => n };
    }

    it('when 1,000 unknown keys come from one address at once, then at most the limit reach the database', async () => {
      const { repo, lookups } = counting(ctx.keys);
      const auth = new Authenticator(repo, { unknownKeyLookupsPerMinute: LIMIT });
      const results = await Promise.allSettled(Array.from({ length: 1_000 }, async () => auth.identify(generateKey(), from('10.0.0.1'))));
      assert.equal(lookups(), LIMIT);
      assert.equal(results.filter((r) => r.status === 'rejected').length, 1_000 - LIMIT);
      // The same unknown key again costs nothing: it is remembered as unknown.
      const again = generateKey();
      await auth.identify(again, from('10.0.0.2'));
      await auth.identify(again, from('10.0.0.2'));
      assert.equal(lookups(), LIMIT + 1);
    });

    it('when key lookups fail (the database is down), then they do not count as unknown keys', async () => {
      const repo = Object.create(ctx.keys) as ApiKeyRepository;
      let down = true;
      repo.findByKey = (key: string) => (down ? Promise.reject(new Error('database unavailable')) : ctx.keys.findByKey(key));
      const auth = new Authenticator(repo, { unknownKeyLookupsPerMinute: LIMIT });
      for (let i = 0; i < LIMIT * 3; i++)
        await assert.rejects(Promise.resolve(auth.identify(generateKey(), from('10.0.0.3'))), /database unavailable/);
      down = false;
      assert.equal(await auth.identify(generateKey(), from('10.0.0.3')), undefined, 'looked up (unknown), not refused');
    });

    it('when a flood of unknown keys from many addresses passes, then a known key stays cached (no lookup)', async () => {
      const { repo, lookups } = counting(ctx.keys);
      const auth = new Authenticator(repo, { ttlMs: 60_000, unknownKeyLookupsPerMinute: LIMIT, cachedKeys: 1_000 });
      assert.ok(await auth.identify(valid, from('10.1.0.1')));
      const before = lookups();
      // 1,200 unknown keys (more than the 1,000 entries of this lookup cache), 20 per address, 200 at a time.
      for (let batch = 0; batch < 6; batch++) {
        await Promise.all(
          Array.from({ length: 200 }, async (_, i) => auth.identify(generateKey(), from(`10.2.${batch}.${Math.floor(i / LIMIT)}`))),
        );
      }
      assert.equal(lookups(), before + 1_200);
      assert.ok(auth.peek(valid, 'query'), 'the known key was pushed out of the cache');
    });
  });
});
