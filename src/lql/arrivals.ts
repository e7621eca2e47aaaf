/**
 * The "new events" signal of live tail (tail.ts): which events of a source were just written,
 * told to the viewers of that source. No event, no signal, so an idle viewer costs nothing.
 *
 * In one process the ingest writer itself is the signal (`Arrivals.watch` wraps it). With
 * several processes on one REDIS_URL, `RedisArrivalRelay` carries it between them on Redis
 * pub/sub, one channel per source (docs/API.md, "Live tail"):
 *
 *   <ns>tail:events:<source>   the ids and times of a written batch, from the process that wrote it
 *   <ns>tail:hello             "I have viewers of these sources" (every 10 s while true, and at once
 *                              when a viewer of a new source arrives or a process asks at start-up)
 *
 * A process publishes a source's arrivals only while another process said hello for it in the
 * last 30 s, so ingest of sources nobody tails sends nothing to Redis. Without Redis, or while
 * it is down, each process tells only its own viewers.
 */
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import type { LogWriter } from '../ingest/write.js';
import type { Logger } from '../logger.js';

export interface Arrival {
  readonly id: string;
  /** Unix microseconds. */
  readonly micros: bigint;
}

/** `dropped`: arrivals of the same batch left out to keep one message bounded (the viewer counts them). */
export type ArrivalListener = (arrivals: readonly Arrival[], dropped: number) => void;

/** At most this many arrivals of one batch go to a viewer (and through Redis); a viewer keeps no more anyway. */
export const MAX_ARRIVALS_PER_BATCH = 1000;

/** Carries arrivals to the viewers of other processes (RedisArrivalRelay). */
export interface ArrivalRelay {
  /** Tells the other processes' viewers of `source`; sends nothing while none of them watches it. */
  publish(source: string, arrivals: readonly Arrival[], dropped: number): void;
  /**
   * This process has a viewer of `source`: what other processes write of it reaches `deliver`.
   * Resolves once the others have been told; the function it gives stops watching.
   */
  watch(source: string): Promise<() => void>;
  close(): Promise<void>;
}

/** Who listens for new events of which source, told by the writer it wraps (and by the relay). */
export class Arrivals {
  private readonly listeners = new Map<string, Set<ArrivalListener>>();
  private relay: ArrivalRelay | undefined;

  /** Arrivals of other processes too, through `relay` (its deliveries must come to `deliver`). */
  relayThrough(relay: ArrivalRelay): void {
    this.relay = relay;
  }

  /** The writer, telling the source's listeners after each write that committed. */
  watch(writer: Pick<LogWriter, 'write'>): Pick<LogWriter, 'write'> {
    return {
      write: async (source, rows, ...rest) => {
        await writer.write(source, rows, ...rest);
        if (!rows.length) return;
        const kept = rows.length > MAX_ARRIVALS_PER_BATCH ? rows.slice(rows.length - MAX_ARRIVALS_PER_BATCH) : rows;
        const arrivals = kept.map((r) => ({ id: r.id, micros: r.micros }));
        const dropped = rows.length - kept.length;
        this.deliver(source.name, arrivals, dropped);
        this.relay?.publish(source.name, arrivals, dropped);
      },
    };
  }

  /** Tells this process' listeners of `source`. */
  deliver(source: string, arrivals: readonly Arrival[], dropped: number): void {
    const listeners = this.listeners.get(source);
    if (!listeners) return;
    for (const listener of listeners) listener(arrivals, dropped);
  }

  /** Resolves once arrivals of `source` from any process reach `listener`; the function it gives stops them. */
  async listen(source: string, listener: ArrivalListener): Promise<() => void> {
    let set = this.listeners.get(source);
    if (!set) this.listeners.set(source, (set = new Set()));
    set.add(listener);
    const unwatch = this.relay ? await this.relay.watch(source) : () => undefined;
    return () => {
      unwatch();
      set.delete(listener);
      if (!set.size && this.listeners.get(source) === set) this.listeners.delete(source);
    };
  }

  /** Viewers listening now, over all sources (metrics, tests). */
  get viewers(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }
}

const HELLO_EVERY_MS = 10_000;
const HELLO_LASTS_MS = 30_000;
/** How long a viewer's start waits for Redis before streaming with this process' arrivals only. */
const WATCH_WAIT_MS = 1000;

type Client = ReturnType<typeof createClient>;
interface Hello {
  /** The process that sent it. */
  o: string;
  /** Sources it has viewers of. */
  s?: string[];
  /** A process starting asks the others to say hello now. */
  ask?: true;
}
interface Published {
  o: string;
  /** [id, micros] of each arrival. */
  r: [string, string][];
  d: number;
}

export class RedisArrivalRelay implements ArrivalRelay {
  /** This process, so it ignores its own messages (its viewers were told directly). */
  private readonly origin = randomBytes(8).toString('hex');
  /** Sources this process has viewers of → how many. */
  private readonly local = new Map<string, number>();
  /** Sources other processes have viewers of → until when they said so (ms). */
  private readonly remote = new Map<string, number>();
  /** Sources whose channel `sub` is subscribed to (sync). */
  private readonly subscribed = new Set<string>();
  /** The last subscription change of each source's channel under way (sync). */
  private readonly syncing = new Map<string, Promise<void>>();
  private readonly helloTimer: NodeJS.Timeout;
  private lastErrorLog = 0;

  private constructor(
    private readonly pub: Client,
    private readonly sub: Client,
    private readonly ns: string,
    private readonly arrivals: Pick<Arrivals, 'deliver'>,
    private readonly logger: Logger,
    helloEveryMs: number,
  ) {
    this.helloTimer = setInterval(() => void this.hello([...this.local.keys()]), helloEveryMs);
    this.helloTimer.unref();
  }

  /**
   * Two Redis connections (a subscriber cannot publish); start-up waits at most a second for them.
   * `helloEveryMs`: HELLO_EVERY_MS but in tests.
   */
  static async open(options: {
    url: string;
    namespace?: string;
    arrivals: Arrivals;
    logger: Logger;
    helloEveryMs?: number;
  }): Promise<RedisArrivalRelay> {
    const pub = createClient({
      url: options.url,
      disableOfflineQueue: true,
      socket: { connectTimeout: 1000, keepAlive: true, noDelay: true, reconnectStrategy: (n: number) => Math.min(50 * 2 ** n, 2000) },
    });
    // The subscriber queues while disconnected, so subscriptions made during an outage apply when Redis is back.
    const sub = pub.duplicate({ disableOfflineQueue: false });
    const relay = new RedisArrivalRelay(
      pub,
      sub,
      options.namespace ?? 'lq:',
      options.arrivals,
      options.logger,
      options.helloEveryMs ?? HELLO_EVERY_MS,
    );
    pub.on('error', (err: Error) => relay.logError(err));
    sub.on('error', (err: Error) => relay.logError(err));
    // Whatever connected by then is used; the rest keeps reconnecting in the background.
    // The others are asked for their viewers once this process hears the answers: asked before its
    // subscription, they would answer unheard, and it would learn of their viewers only at their
    // next hello (up to HELLO_EVERY_MS), sending their viewers nothing meanwhile.
    const asked = Promise.all([pub.connect(), sub.connect()])
      .then(() => sub.subscribe(relay.ns + 'tail:hello', (message) => relay.onHello(message)))
      .then(() => relay.send('tail:hello', { o: relay.origin, ask: true }));
    await within(asked, WATCH_WAIT_MS);
    options.arrivals.relayThrough(relay);
    return relay;
  }

  publish(source: string, arrivals: readonly Arrival[], dropped: number): void {
    const until = this.remote.get(source);
    if (until === undefined) return;
    if (until < Date.now()) {
      this.remote.delete(source);
      return;
    }
    const message: Published = { o: this.origin, r: arrivals.map((a) => [a.id, String(a.micros)]), d: dropped };
    void this.send('tail:events:' + source, message);
  }

  async watch(source: string): Promise<() => void> {
    this.local.set(source, (this.local.get(source) ?? 0) + 1);
    await within(this.sync(source), WATCH_WAIT_MS);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      const left = (this.local.get(source) ?? 1) - 1;
      if (left > 0) return void this.local.set(source, left);
      this.local.delete(source);
      // The others keep publishing until this process' last hello runs out: harmless, and no goodbye to lose.
      void this.sync(source);
    };
  }

  /**
   * Subscribes `sub` to `source`'s channel, or unsubscribes it, as this process now has viewers of
   * it or not; one change at a time per channel, each after the one before has completed. Why:
   * node-redis sends no SUBSCRIBE for a channel whose UNSUBSCRIBE is still under way, and that
   * UNSUBSCRIBE then completes, so a viewer arriving as the last one leaves (the console reopening
   * its tail with a new filter) was deaf to every other process (test/lql/arrivals.test.ts).
   * A new subscription says hello at once, so the others start publishing to it.
   */
  private sync(source: string): Promise<void> {
    const next = (this.syncing.get(source) ?? Promise.resolve())
      .then(async () => {
        const wanted = this.local.has(source);
        if (wanted === this.subscribed.has(source)) return;
        if (wanted) {
          await this.sub.subscribe(this.channel(source), (message) => this.onEvents(source, message));
          this.subscribed.add(source);
          await this.hello([source]);
        } else {
          this.subscribed.delete(source);
          await this.sub.unsubscribe(this.channel(source));
        }
      })
      .catch((err: Error) => this.logError(err));
    this.syncing.set(source, next);
    void next.then(() => {
      if (this.syncing.get(source) === next) this.syncing.delete(source);
    });
    return next;
  }

  async close(): Promise<void> {
    clearInterval(this.helloTimer);
    await Promise.all([closeClient(this.sub), closeClient(this.pub)]);
  }

  private channel(source: string): string {
    return `${this.ns}tail:events:${source}`;
  }

  private hello(sources: string[]): Promise<void> {
    return sources.length ? this.send('tail:hello', { o: this.origin, s: sources }) : Promise.resolve();
  }

  private send(channel: string, message: Hello | Published): Promise<void> {
    return this.pub.publish(this.ns + channel, JSON.stringify(message)).then(
      () => undefined,
      (err: Error) => this.logError(err),
    );
  }

  private onHello(text: string): void {
    const hello = parse<Hello>(text);
    if (!hello || hello.o === this.origin) return;
    if (hello.ask) void this.hello([...this.local.keys()]);
    const until = Date.now() + HELLO_LASTS_MS;
    for (const source of hello.s ?? []) this.remote.set(source, until);
  }

  private onEvents(source: string, text: string): void {
    const message = parse<Published>(text);
    if (!message || message.o === this.origin || !Array.isArray(message.r)) return;
    let arrivals: Arrival[];
    try {
      arrivals = message.r.map(([id, micros]) => ({ id: String(id), micros: BigInt(micros) }));
    } catch {
      return; // not a message of this service
    }
    this.arrivals.deliver(source, arrivals, Number(message.d) || 0);
  }

  private logError(err: Error): void {
    if (Date.now() - this.lastErrorLog < 10_000) return;
    this.lastErrorLog = Date.now();
    this.logger.warn({ err: err.message }, "live tail: Redis unavailable; viewers see only their own process' events meanwhile");
  }
}

/** As src/cache/redisStore.ts closes its client: at most half a second, then the socket is dropped. */
async function closeClient(client: Client): Promise<void> {
  if (!client.isOpen) return;
  if (client.isReady) await Promise.race([client.close().catch(() => undefined), new Promise((r) => setTimeout(r, 500))]);
  if (client.isOpen) client.destroy();
}

function parse<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

/** Waits for `work` at most `ms` (it goes on in the background). */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
