/**
 * How busy the machine is, as a factor for the few thresholds that are wall time by nature
 * (a service must answer /health promptly while it is attacked: test/hardening/hostile-tester.test.ts).
 *
 * A fixed piece of CPU work (an FNV hash over 4M integers: no allocation, so no garbage collection
 * in it) took REFERENCE_MS on a quiet core of the 2-core CI machine (the fastest of 40 runs, Node 20).
 * Timed again while a test runs, its median over the samples says how much slower the machine is
 * now: 1 when quiet, ~2 with two CPU hogs beside the suite. A threshold multiplied by it holds the
 * same meaning under load instead of failing because another process had the cores (issue 29:
 * thresholds that scale with measured machine speed, not with wall time).
 */
import { performance } from 'node:perf_hooks';

const REFERENCE_MS = 6.6;
const ITERATIONS = 4_000_000;

/** One timing of the fixed work, in ms. */
export function timeFixedWork(): number {
  const started = performance.now();
  let h = 0x811c9dc5;
  for (let i = 0; i < ITERATIONS; i++) {
    h ^= i & 0xff;
    h = Math.imul(h, 0x01000193);
  }
  // Using h keeps the loop from being optimised away.
  return performance.now() - started + (h === 0.5 ? 1 : 0);
}

/** Collects timings of the fixed work (one per call of `sample`) and gives the slowdown they show. */
export class SlowdownMeter {
  private readonly samples: number[] = [];

  sample(): void {
    this.samples.push(timeFixedWork());
  }

  /** The median timing against the quiet reference, never below 1 (a faster machine keeps the threshold). */
  factor(): number {
    if (this.samples.length === 0) return 1;
    const sorted = [...this.samples].sort((a, b) => a - b);
    return Math.max(1, sorted[Math.floor(sorted.length / 2)] / REFERENCE_MS);
  }
}
