import { install } from '@sinonjs/fake-timers';
import assert from 'node:assert/strict';
import { CircuitBreaker, StoreTimeoutError, withTimeout } from '../../src/cache/guard.js';

/** A store call that answers `value` after `ms` (on whatever clock setTimeout is). */
const answerAfter = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('cache store guard', () => {
  describe('budgets and the open window, on fake timers', () => {
    // setTimeout and Date only: the guard's setImmediate (reading arrived answers first) stays real.
    let clock: ReturnType<typeof install>;
    beforeEach(() => {
      clock = install({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    });
    afterEach(() => clock.uninstall());

    it('when a call takes longer than its budget, then it fails with a timeout, and the breaker skips calls for a while', async () => {
      const opened: unknown[] = [];
      const breaker = new CircuitBreaker({ timeoutMs: 20, openMs: 200, onOpen: (err) => opened.push(err) });
      let calls = 0;
      const slow = () => {
        calls++;
        return answerAfter(500, 'late');
      };
      const run = breaker.run(slow);
      await clock.tickAsync(19);
      assert.equal(opened.length, 0, 'still within the budget');
      await clock.tickAsync(1);
      assert.deepEqual(await run, { ok: false });
      assert.ok(opened[0] instanceof StoreTimeoutError);
      assert.ok(breaker.open);
      assert.deepEqual(await breaker.run(() => Promise.resolve('fast')), { ok: false }, 'skipped while open');
      assert.equal(calls, 1);
      await clock.tickAsync(199);
      assert.deepEqual(await breaker.run(() => Promise.resolve('fast')), { ok: false }, 'still open just before openMs');
      await clock.tickAsync(2);
      assert.deepEqual(await breaker.run(() => Promise.resolve('fast')), { ok: true, value: 'fast' }, 'tried again after openMs');
      assert.equal(opened.length, 1);
    });

    it('when a call fails, then the breaker opens; a large write may take its extra budget', async () => {
      const breaker = new CircuitBreaker({ timeoutMs: 20, openMs: 100 });
      assert.deepEqual(await breaker.run(() => Promise.reject(new Error('ECONNREFUSED'))), { ok: false });
      await clock.tickAsync(101);
      const write = breaker.run(() => answerAfter(40, 1), 100);
      await clock.tickAsync(40);
      assert.deepEqual(await write, { ok: true, value: 1 });
    });
  });

  it('when the event loop was blocked past the budget but the answer had arrived, then the answer wins', async () => {
    const answer = new Promise<string>((resolve) => setImmediate(() => resolve('ok')));
    const guarded = withTimeout(answer, 5);
    const end = Date.now() + 30;
    while (Date.now() < end); // block: the timer is overdue before the answer is read
    assert.equal(await guarded, 'ok');
  });
});
