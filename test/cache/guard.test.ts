import assert from 'node:assert/strict';
import { CircuitBreaker, StoreTimeoutError, withTimeout } from '../../src/cache/guard.js';
import { sleep } from './support.js';

describe('cache store guard', () => {
  it('when a call takes longer than its budget, then it fails with a timeout, and the breaker skips calls for a while', async () => {
    const opened: unknown[] = [];
    const breaker = new CircuitBreaker({ timeoutMs: 20, openMs: 200, onOpen: (err) => opened.push(err) });
    let calls = 0;
    const slow = () => {
      calls++;
      return sleep(500).then(() => 'late');
    };
    const started = performance.now();
    assert.deepEqual(await breaker.run(slow), { ok: false });
    assert.ok(performance.now() - started < 150);
    assert.ok(opened[0] instanceof StoreTimeoutError);
    assert.ok(breaker.open);
    assert.deepEqual(await breaker.run(async () => 'fast'), { ok: false }, 'skipped while open');
    assert.equal(calls, 1);
    await sleep(220);
    assert.deepEqual(await breaker.run(async () => 'fast'), { ok: true, value: 'fast' }, 'tried again after openMs');
    assert.equal(opened.length, 1);
  });

  it('when a call fails, then the breaker opens; a large write may take its extra budget', async () => {
    const breaker = new CircuitBreaker({ timeoutMs: 20, openMs: 100 });
    assert.deepEqual(await breaker.run(() => Promise.reject(new Error('ECONNREFUSED'))), { ok: false });
    await sleep(120);
    assert.deepEqual(await breaker.run(() => sleep(40).then(() => 1), 100), { ok: true, value: 1 });
  });

  it('when the event loop was blocked past the budget but the answer had arrived, then the answer wins', async () => {
    const answer = new Promise<string>((resolve) => setImmediate(() => resolve('ok')));
    const guarded = withTimeout(answer, 5);
    const end = Date.now() + 30;
    while (Date.now() < end); // block: the timer is overdue before the answer is read
    assert.equal(await guarded, 'ok');
  });
});
