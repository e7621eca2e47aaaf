import assert from 'node:assert/strict';
import { generateKey } from '../../src/auth/keys.js';
import { createEmptyDatabase } from '../support/db.js';
import { sleep } from '../support/wait.js';
import { OwnRedis, startService, type ServiceProcess } from './support.js';

/**
 * Two service processes (`tsx src/main.ts`) on one database and one Redis, with warming shortened
 * (WARMING_SCALE=0.01: usage.api-counts is re-run every 3 s instead of 300 s). Between them, a
 * live key is warmed once per period, not once per process.
 */
describe('two service processes on one Redis', function () {
  this.timeout(90_000);
  const adminKey = generateKey();
  let redis: OwnRedis;
  const services: ServiceProcess[] = [];
  const ports: number[] = [];

  async function start(databaseUrl: string): Promise<number> {
    const service = await startService(
      { DATABASE_URL: databaseUrl, REDIS_URL: redis.url, ADMIN_API_KEY: adminKey, WARMING_TICK: '* * * * * *', WARMING_SCALE: '0.01' },
      { readyTimeoutMs: 30_000 },
    );
    services.push(service);
    return service.port;
  }

  async function warmRuns(port: number): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('logquery_cache_events_total{event="warm_run"}'));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  before(async () => {
    redis = await OwnRedis.start();
    const { url } = await createEmptyDatabase('lq_cache_procs');
    ports.push(await start(url)); // the first one migrates and seeds; then the second
    ports.push(await start(url));
  });
  after(async () => {
    await Promise.all(services.map((service) => service.kill()));
    await redis?.kill();
  });

  it('when usage.api-counts is called once and N periods pass, then the two processes warmed it about N times in all', async () => {
    const url = `http://127.0.0.1:${ports[0]}/api/endpoints/query/usage.api-counts?interval=hourly&project=${encodeURIComponent('^https://procs\\.')}`;
    const first = await fetch(url, { headers: { 'X-API-KEY': adminKey } });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-cache'), 'MISS');
    const started = Date.now();
    const body = await first.text();

    await sleep(4 * 3000 + 500);
    const periods = (Date.now() - started) / 3000;
    const [a, b] = [await warmRuns(ports[0]), await warmRuns(ports[1])];
    if (process.env.CACHE_TEST_VERBOSE) console.log(`    warm runs: ${a} + ${b} in ${periods.toFixed(2)} periods`);
    assert.ok(Math.abs(a + b - Math.floor(periods)) <= 1, `${a} + ${b} warm runs in ${periods.toFixed(2)} periods`);

    // The other process answers from the shared, warmed entry.
    const other = await fetch(url.replace(String(ports[0]), String(ports[1])), { headers: { 'X-API-KEY': adminKey } });
    assert.equal(other.headers.get('x-cache'), 'HIT');
    assert.equal(await other.text(), body);
  });
});
