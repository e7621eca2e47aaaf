/**
 * Clients at once, each calling in turn for a fixed time: the concurrency scenarios of
 * bench/hot.ts and bench/run-all.ts.
 */
import { performance } from 'node:perf_hooks';

export interface ClientsFigures {
  /** Calls completed per second. */
  qps: number;
  p99: number;
  /** Calls that returned false. */
  errors: number;
}

/** `clients` loops for `seconds`, client c making calls c, c+1, …; `call(i)` resolves false for a failed call. */
export async function runClients(clients: number, seconds: number, call: (i: number) => Promise<boolean>): Promise<ClientsFigures> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = c; performance.now() < end; i++) {
        const t0 = performance.now();
        if (!(await call(i))) errors++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { qps: latencies.length / seconds, p99: latencies[Math.floor(latencies.length * 0.99)], errors };
}
