/**
 * Fails every test of the enclosing `describe` during which a promise was rejected with nobody
 * awaiting it: such a rejection would otherwise only be logged, or end the run far from its cause.
 * Call it at the top of a `describe` body.
 */
import assert from 'node:assert/strict';

export function failOnUnhandledRejections(): void {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  before(() => process.on('unhandledRejection', onRejection));
  after(() => process.off('unhandledRejection', onRejection));
  afterEach(() => assert.deepEqual(rejections.splice(0), [], 'no unhandled rejection'));
}
