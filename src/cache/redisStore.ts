/**
 * The shared cache on Redis. Layout (all under a namespace, `lq:` by default):
 *
 *   <ns>ep:<id>:<version>:<hash>      the encoded body, `SET … EX ttl`
 *   <ns>lock:<key>                    single-flight lock of a miss, `SET … NX PX`
 *   <ns>warm:<key>:<period>           warming lock, one per key and period
 *   <ns>warm:due    (sorted set)      live key → next due time (ms)
 *   <ns>warm:spec   (hash)            live key → LiveEntry JSON
 *   <ns>warm:seen   (hash)            live key → last request time (ms)
 *
 * The client never queues commands while disconnected (`disableOfflineQueue`) and reconnects
 * with backoff forever, so a Redis outage turns into fast errors that the cache answers by
 * computing, and caching resumes by itself when Redis is back.
 */
import { createClient } from 'redis';
import type { Logger } from '../logger.js';
import type { CacheStore, DueKey, LiveEntry, LiveRegistration, PutExtra } from './store.js';

type Client = ReturnType<typeof createClient>;

const UNLOCK_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

export interface RedisStoreOptions {
  url: string;
  /** Prefix of every key; tests use their own. */
  namespace?: string;
  logger: Logger;
  /** How long start-up waits for the first connection before serving anyway (ms). */
  connectWaitMs?: number;
}

export class RedisStore implements CacheStore {
  readonly remote = true;
  private readonly ns: string;
  private readonly due: string;
  private readonly specs: string;
  private readonly seen: string;
  private lastErrorLog = 0;

  private constructor(
    private readonly client: Client,
    namespace: string,
  ) {
    this.ns = namespace;
    this.due = namespace + 'warm:due';
    this.specs = namespace + 'warm:spec';
    this.seen = namespace + 'warm:seen';
  }

  /** Connects (waiting at most `connectWaitMs`; an unreachable Redis keeps being retried in the background). */
  static async open(options: RedisStoreOptions): Promise<RedisStore> {
    const { logger } = options;
    const client = createClient({
      url: options.url,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 1000,
        keepAlive: true,
        noDelay: true,
        // Never give up: 50 ms, 100 ms, … at most 2 s between attempts.
        reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2000),
      },
    });
    const store = new RedisStore(client, options.namespace ?? 'lq:');
    client.on('error', (err: Error) => store.logError(logger, err));
    client.on('ready', () => logger.info('cache: connected to Redis'));
    const connected = client.connect().then(
      () => true,
      () => false,
    );
    const ok = await Promise.race([connected, sleep(options.connectWaitMs ?? 1000).then(() => false)]);
    if (!ok) logger.warn('cache: Redis is not reachable yet; serving without it and retrying in the background');
    return store;
  }

  async get(key: string): Promise<string | null> {
    return (await this.client.sendCommand<string | null>(['GET', this.ns + key])) ?? null;
  }

  async lock(name: string, token: string, ttlMs: number): Promise<boolean> {
    const reply = await this.client.sendCommand<string | null>([
      'SET',
      this.ns + name,
      token,
      'NX',
      'PX',
      String(Math.max(1, Math.ceil(ttlMs))),
    ]);
    return reply === 'OK';
  }

  async unlock(name: string, token: string): Promise<void> {
    await this.client.sendCommand(['EVAL', UNLOCK_SCRIPT, '1', this.ns + name, token]);
  }

  async put(key: string, body: string, ttlSeconds: number, extra: PutExtra = {}): Promise<void> {
    const multi = this.client.multi();
    multi.addCommand(['SET', this.ns + key, body, 'EX', String(Math.max(1, Math.ceil(ttlSeconds)))]);
    if (extra.live) this.addRegistration(multi, key, extra.live, false);
    if (extra.unlock) multi.addCommand(['EVAL', UNLOCK_SCRIPT, '1', this.ns + extra.unlock.name, extra.unlock.token]);
    await multi.exec();
  }

  /** Usually one small round trip; the entry (which may hold a large `sql`) is sent only when the key was dropped. */
  async touch(key: string, live: LiveRegistration): Promise<void> {
    const [due] = (await this.client
      .multi()
      .addCommand(['ZSCORE', this.due, key])
      .addCommand(['HSET', this.seen, key, String(live.seenAt)])
      .execAsPipeline()) as unknown as [string | null, number];
    if (due !== null) return;
    const multi = this.client.multi();
    this.addRegistration(multi, key, live, true);
    await multi.execAsPipeline();
  }

  async dueKeys(now: number, limit: number): Promise<DueKey[]> {
    const flat = await this.client.sendCommand<string[]>([
      'ZRANGEBYSCORE',
      this.due,
      '-inf',
      String(now),
      'WITHSCORES',
      'LIMIT',
      '0',
      String(limit),
    ]);
    const due: DueKey[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) due.push({ key: flat[i], due: Number(flat[i + 1]) });
    return due;
  }

  async liveEntries(keys: string[]): Promise<Array<{ entry: LiveEntry; seenAt: number } | null>> {
    if (!keys.length) return [];
    const [specs, seen] = (await this.client
      .multi()
      .addCommand(['HMGET', this.specs, ...keys])
      .addCommand(['HMGET', this.seen, ...keys])
      .execAsPipeline()) as unknown as [Array<string | null>, Array<string | null>];
    return keys.map((_, i) => {
      const json = specs[i];
      if (!json) return null;
      try {
        return { entry: JSON.parse(json) as LiveEntry, seenAt: Number(seen[i] ?? 0) };
      } catch {
        return null;
      }
    });
  }

  async reschedule(key: string, due: number): Promise<void> {
    await this.client.sendCommand(['ZADD', this.due, 'XX', String(due), key]);
  }

  async drop(keys: string[]): Promise<void> {
    if (!keys.length) return;
    await this.client
      .multi()
      .addCommand(['ZREM', this.due, ...keys])
      .addCommand(['HDEL', this.specs, ...keys])
      .addCommand(['HDEL', this.seen, ...keys])
      .execAsPipeline();
  }

  async ping(): Promise<boolean> {
    return (await this.client.sendCommand<string>(['PING'])) === 'PONG';
  }

  async close(): Promise<void> {
    if (!this.client.isOpen) return;
    if (!this.client.isReady) {
      this.client.destroy();
      return;
    }
    await Promise.race([this.client.close().catch(() => undefined), sleep(500)]);
    if (this.client.isOpen) this.client.destroy();
  }

  /**
   * Live-key registration: the entry first, then the due time, so the warmer never finds a due
   * key without its entry. On a store the key is due one period from now; on a request
   * (`onlyIfMissing`) an existing due time is kept.
   */
  private addRegistration(
    multi: { addCommand(args: string[]): unknown },
    key: string,
    live: LiveRegistration,
    onlyIfMissing: boolean,
  ): void {
    multi.addCommand(['HSET', this.specs, key, JSON.stringify(live.entry)]);
    multi.addCommand(['HSET', this.seen, key, String(live.seenAt)]);
    multi.addCommand(onlyIfMissing ? ['ZADD', this.due, 'NX', String(live.due), key] : ['ZADD', this.due, String(live.due), key]);
  }

  /** Connection errors repeat on every reconnect attempt: log at most one every 10 s. */
  private logError(logger: Logger, err: Error): void {
    const now = Date.now();
    if (now - this.lastErrorLog < 10_000) return;
    this.lastErrorLog = now;
    logger.warn({ err: err.message }, 'cache: Redis error; requests are answered without the cache until it is back');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
