/**
 * Waiting in tests, in one place. Time that passes *in the service* (lifetimes, warming periods,
 * breaker windows) is moved by hand instead (a `now` option, or @sinonjs/fake-timers); these are
 * for what a test cannot move: another process starting, a socket closing, a fire-and-forget
 * write landing.
 */

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every `everyMs` until it returns true (then true) or `ms` pass (then false). */
export async function eventually(check: () => Promise<boolean> | boolean, ms: number, everyMs = 50): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
}

/** Reads until `check` holds and returns that value; rejects naming `what` and the last value when `ms` pass. */
export async function waitFor<T>(
  what: string,
  read: () => Promise<T>,
  check: (value: T) => boolean,
  ms = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached; last value ${JSON.stringify(value)?.slice(0, 500)}`);
    await sleep(everyMs);
  }
}
