/**
 * Stopping within a deadline. A stop that waits forever (a request that never ends, a pool that
 * never drains, a Redis close that hangs) keeps a replica half alive until something kills it, and
 * a close that rejects with nobody listening is an unhandled rejection: both end here as a log line
 * and an exit code.
 */
import type { Logger } from './logger.js';

export interface StopStep {
  name: string;
  run(): Promise<void> | void;
}

/**
 * Runs `steps` one after the other within `timeoutMs` in all. A step that throws is logged and the
 * next one still runs. Resolves with the exit code: 0 when every step finished, 1 when one failed
 * or the deadline passed first (logged with the step still running). Never rejects.
 */
export async function stopWithin(timeoutMs: number, logger: Logger, steps: readonly StopStep[]): Promise<0 | 1> {
  let current = '';
  let failed = false;
  const all = (async () => {
    for (const step of steps) {
      current = step.name;
      try {
        await step.run();
      } catch (err) {
        failed = true;
        logger.error({ step: step.name, err: (err as Error)?.message ?? String(err) }, 'stopping: a step failed');
      }
    }
    return 'done' as const;
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
  });
  const outcome = await Promise.race([all, deadline]);
  clearTimeout(timer);
  if (outcome === 'late') {
    logger.error({ timeoutMs, step: current }, `stopping: not done within ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS); exiting anyway`);
    return 1;
  }
  return failed ? 1 : 0;
}
