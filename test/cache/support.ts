/**
 * Cache test support: caches on the real Redis (127.0.0.1:6379, each test in its own key
 * namespace), and throw-away `redis-server` processes for outage tests (never the shared one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createClient } from 'redis';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { createResultCache, type ResultCacheOptions } from '../../src/cache/index.js';
import type { StoreResultCache } from '../../src/cache/resultCache.js';
import type { CacheRequest, WarmSpec } from '../../src/cache/types.js';
import { freePort } from '../support/net.js';
import { eventually, sleep } from '../support/wait.js';

export { freePort };

export const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A namespace no other test (or test run) uses. */
export function uniqueNamespace(label: string): string {
  return `lqtest:${label}:${process.pid}:${Date.now().toString(36)}:${Math.floor(Math.random() * 1e6)}:`;
}

export interface TestCache {
  cache: StoreResultCache;
  metrics: Metrics;
  /** Count of one `logquery_cache_events_total` event. */
  events: (event: string) => Promise<number>;
}

/** A result cache as the service builds it; `redisUrl` undefined gives the in-process store. */
export async function testCache(
  redisUrl: string | undefined,
  env: Record<string, string> = {},
  options: ResultCacheOptions = {},
): Promise<TestCache> {
  const config = loadConfig({
    DATABASE_URL: 'postgresql://unused@127.0.0.1/unused',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    QUERY_TIMEOUT_MS: '5000',
    ...env,
  });
  const metrics = createMetrics();
  const cache = await createResultCache(config, metrics, createLogger('silent'), options);
  return { cache, metrics, events: (event) => cacheEvents(metrics, event) };
}

export async function cacheEvents(metrics: Metrics, event: string): Promise<number> {
  const { values } = await metrics.cacheEvents.get();
  return values.find((v) => v.labels.event === event)?.value ?? 0;
}

export function spec(endpointId: string, params: Record<string, string> = {}): WarmSpec {
  return { endpointId, version: 1, params, redact: false };
}

export function request(key: string, overrides: Partial<CacheRequest> = {}): CacheRequest {
  return { key, ttlSeconds: 60, warmPeriodSeconds: null, spec: spec(key), ...overrides };
}

/** A compute function that counts its calls and answers after `delayMs`. */
export function countingCompute(body: (n: number) => string = (n) => `{"result":[{"n":${n}}]}`, delayMs = 20) {
  const counter = {
    calls: 0,
    compute: async () => {
      const n = ++counter.calls;
      await sleep(delayMs);
      return body(n);
    },
  };
  return counter;
}

/** Runs `use` with a raw client on a Redis (to look at what the cache stored), closed after. */
export async function withRawRedis<T>(use: (raw: RawRedis) => Promise<T>, url = SHARED_REDIS_URL): Promise<T> {
  const client = createClient({ url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    client.destroy();
  }
}
type RawRedis = ReturnType<typeof createClient>;

/** A `redis-server` child process of this test on its own port, to kill, freeze and restart. */
export class OwnRedis {
  private child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort());
    await redis.restart();
    return redis;
  }

  /** Starts the server (again) on the same port and waits until it answers PING. */
  async restart(): Promise<void> {
    if (this.child) throw new Error('already running');
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
    });
    const ok = await eventually(async () => {
      const client = createClient({ url: this.url, socket: { reconnectStrategy: false, connectTimeout: 200 } });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return (await client.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        if (client.isOpen) client.destroy();
      }
    }, 5000);
    if (!ok) throw new Error(`redis-server on port ${this.port} did not start`);
  }

  /** SIGKILL, and waits for the process to be gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** SIGSTOP: the server keeps its connections but answers nothing (a stalled Redis). */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }
}
