/**
 * Figures of the result cache (not a test): `npx tsx bench/cache.ts`.
 * Uses the shared Redis on 127.0.0.1:6379 in its own namespace, and its own redis-server for
 * the outage figures. Prints one line per figure.
 */
import { OwnRedis, SHARED_REDIS_URL, request, testCache, uniqueNamespace } from '../test/cache/support.js';

function stats(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `median ${(at(0.5) * 1000).toFixed(1)} µs, p99 ${(at(0.99) * 1000).toFixed(1)} µs (n=${samples.length})`;
}

async function timeEach(n: number, call: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call(i);
    out.push(performance.now() - t);
  }
  return out;
}

const rows = (n: number) =>
  JSON.stringify({
    result: Array.from({ length: n }, (_, i) => ({ timestamp: 1700000000000000 + i, total_rest_requests: i, path: '/rest/v1/x' })),
  });
const instant = (body: string) => async () => body;

async function main() {
  for (const [label, url] of [
    ['in-process', undefined],
    ['Redis (loopback)', SHARED_REDIS_URL],
  ] as const) {
    const { cache } = await testCache(url, {}, { namespace: uniqueNamespace('measure') });
    for (const size of [10, 1000]) {
      const body = rows(size);
      const req = request(`ep:m:1:${size}`, { warmPeriodSeconds: 300 });
      await cache.fetch(req, instant(body));
      await timeEach(500, () => cache.fetch(req, instant(body))); // warm up
      console.log(
        `HIT ${label}, ${(body.length / 1024).toFixed(0)} kB body: ${stats(await timeEach(5000, () => cache.fetch(req, instant(body))))}`,
      );
    }
    const body = rows(10);
    console.log(
      `MISS ${label} (lookup + lock + store, compute instant): ${stats(await timeEach(2000, (i) => cache.fetch(request(`ep:miss:1:${i}`), instant(body))))}`,
    );
    await cache.close();
  }

  const redis = await OwnRedis.start();
  const { cache } = await testCache(redis.url, {}, { namespace: uniqueNamespace('measure') });
  const body = rows(10);
  await cache.fetch(request('ep:o:1:x'), instant(body));
  await redis.kill();
  await timeEach(100, (i) => cache.fetch(request(`ep:o:1:${i % 3}`), instant(body)));
  const direct = await timeEach(5000, () => instant(body)());
  const down = await timeEach(5000, (i) => cache.fetch(request(`ep:o:1:${i % 3}`), instant(body)));
  console.log(`Redis killed, fetch (compute instant): ${stats(down)}; compute alone: ${stats(direct)}`);
  await redis.restart();
  await new Promise((r) => setTimeout(r, 2500));
  await cache.fetch(request('ep:s:1:x'), instant(body));
  redis.freeze();
  const stalled = await timeEach(3000, (i) => cache.fetch(request(`ep:s:1:${i % 3}`), instant(body)));
  console.log(
    `Redis stalled (SIGSTOP): first request ${stalled[0].toFixed(1)} ms; every later one in the same second: ${stats(stalled.slice(1))}; slowest ${Math.max(...stalled).toFixed(1)} ms`,
  );
  redis.thaw();
  await cache.close();
  await redis.kill();
}

void main().then(() => process.exit(0));
