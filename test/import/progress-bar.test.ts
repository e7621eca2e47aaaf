/**
 * The importer's progress bar (src/import/logflare/progressBar.ts): redrawn in place on a
 * terminal, plain lines elsewhere, events per second of the run.
 */
import assert from 'node:assert/strict';
import { ProgressBar } from '../../src/import/logflare/progressBar.js';

function output(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, out: { write: (t: string) => writes.push(t), isTTY } };
}

describe('import progress bar', () => {
  it('when it runs on a terminal, then one line is redrawn in place at most ten times a second, with events per second', () => {
    let now = 0;
    const { writes, out } = output(true);
    const bar = new ProgressBar(out, () => now);
    bar.start(10_000, 2_000);
    now = 50;
    bar.advance(500, 'postgres.logs 2026-11-20');
    assert.equal(writes.length, 1, 'not redrawn within 100 ms');
    now = 1000;
    bar.advance(500, 'postgres.logs 2026-11-20');
    assert.equal(writes.length, 2);
    assert.equal(writes[1], `\r[#########.....................] 30% 3,000/10,000 events, 1,000 events/s  postgres.logs 2026-11-20\x1b[K`);
    bar.finish();
    assert.equal(writes.at(-1), '\n');
    assert.ok(
      writes.every((w) => !w.slice(0, -1).includes('\n')),
      'no new line until the end',
    );
  });

  it('when it does not run on a terminal, then it writes a plain line every ten seconds and one at the end', () => {
    let now = 0;
    const { writes, out } = output(false);
    const bar = new ProgressBar(out, () => now);
    bar.start(100, 0);
    for (let s = 1; s <= 25; s++) {
      now = s * 1000;
      bar.advance(4, 'x');
    }
    bar.finish();
    assert.equal(writes.length, 4, 'start, 10 s, 20 s, end');
    assert.ok(writes.every((w) => w.endsWith('\n') && !w.includes('\r')));
    assert.match(writes[1], /^\[#{12}\.{18}\] 40% 40\/100 events, 4 events\/s {2}x\n$/);
    assert.match(writes[3], /^\[#{30}\] 100% 100\/100 events, 4 events\/s {2}done\n$/);
  });
});
