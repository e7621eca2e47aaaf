/**
 * Every call to a remote store runs under a time budget and a circuit breaker, so a down or
 * stalled Redis costs a request at most one budget (tens of ms) and then nothing for a while:
 * after a failure the breaker stays open for `openMs` and calls are skipped outright.
 */
export type Guarded<T> = { ok: true; value: T } | { ok: false };

export interface StoreGuard {
  /** Runs `op` within the guard's time budget plus `extraMs` (large writes). */
  run<T>(op: () => Promise<T>, extraMs?: number): Promise<Guarded<T>>;
  /** True while calls are being skipped after a failure. */
  readonly open: boolean;
}

/** For the in-process store: nothing to guard. */
export const unguarded: StoreGuard = {
  open: false,
  async run<T>(op: () => Promise<T>): Promise<Guarded<T>> {
    return { ok: true, value: await op() };
  },
};

export class CircuitBreaker implements StoreGuard {
  private openUntil = 0;

  constructor(
    private readonly options: {
      timeoutMs: number;
      openMs: number;
      /** Called when the breaker opens (not again while it stays open). */
      onOpen?: (err: unknown) => void;
    },
  ) {}

  get open(): boolean {
    return Date.now() < this.openUntil;
  }

  async run<T>(op: () => Promise<T>, extraMs = 0): Promise<Guarded<T>> {
    if (this.open) return { ok: false };
    try {
      return { ok: true, value: await withTimeout(op(), this.options.timeoutMs + extraMs) };
    } catch (err) {
      if (!this.open) this.options.onOpen?.(err);
      this.openUntil = Date.now() + this.options.openMs;
      return { ok: false };
    }
  }
}

/** Extra time budget to write a large body: 10 ms per 100 kB. */
export function extraPutMs(body: string): number {
  return Math.floor(body.length / 100_000) * 10;
}

export class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`cache store did not answer within ${ms} ms`);
  }
}

/**
 * Rejects when `promise` has not settled within `ms`. When the timer fires, one `setImmediate`
 * lets already-arrived socket data be read first, so a busy event loop (timers run before I/O)
 * does not turn an answered command into a timeout.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new StoreTimeoutError(ms));
      });
    }, ms);
    promise.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
