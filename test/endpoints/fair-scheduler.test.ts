/**
 * The fair scheduler of uncached queries (src/rateLimit/scheduler.ts), driven with queries whose
 * end the test decides: in this process alone, and through the real Redis as several processes
 * see it. HTTP-level behaviour (a lone key's burst, a quiet key behind a backlog) is in
 * fair-scheduling.test.ts; three processes in test/hardening/processes.test.ts.
 */
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { FairScheduler, QueueFull, QueueTimeout, type Grant } from '../../src/rateLimit/scheduler.js';
import type { RedisClient } from '../../src/rateLimit/redisClient.js';
import { SHARED_REDIS_URL, uniqueNamespace } from '../cache/support.js';
import { eventually, sleep, waitFor } from '../support/wait.js';

/** Queries that end when the test says: `started` lists them in the order they got a slot. */
function controlled() {
  const started: string[] = [];
  const grants: Grant[] = [];
  const finishers = new Map<string, () => void>();
  let n = 0;
  return {
    started,
    grants,
    query(label: string) {
      const id = `${label}#${++n}`;
      return (grant: Grant) =>
        new Promise<string>((resolve) => {
          started.push(id);
          grants.push(grant);
          finishers.set(id, () => resolve(id));
        });
    },
    /** Ends the oldest running query of `label` (any label when none given). */
    finish(label?: string) {
      const id = started.find((s) => finishers.has(s) && (label === undefined || s.startsWith(label + '#')));
      assert.ok(id, `a running query of ${label ?? 'any key'}`);
      finishers.get(id)!();
      finishers.delete(id);
    },
    running: () => [...finishers.keys()],
  };
}

const options = { slots: 2, queueLimit: 64, leaseMs: 30_000 };

/** Waits until `check` holds (the scheduler hands slots out asynchronously), failing the test after 5 s. */
async function until(check: () => boolean): Promise<void> {
  assert.ok(await eventually(check, 5_000, 2), `not reached: ${check.toString()}`);
}

for (const shared of [false, true]) {
  describe(`fair scheduler ${shared ? 'through Redis (shared by processes)' : 'in one process'}`, function () {
    this.timeout(30_000);
    let client: RedisClient | undefined;
    let prefix: string;
    const schedulers: FairScheduler[] = [];
    const scheduler = (opts = options) => {
      const s = new FairScheduler(client, prefix, opts);
      schedulers.push(s);
      return s;
    };

    before(async () => {
      if (!shared) return;
      client = createClient({ url: SHARED_REDIS_URL });
      await client.connect();
    });
    beforeEach(() => {
      prefix = uniqueNamespace('sched');
    });
    after(async () => {
      await client?.close();
    });

    it('when one key is alone, then it takes every slot and its whole burst is answered, in order', async () => {
      const s = scheduler();
      const q = controlled();
      const answers = Array.from({ length: 12 }, () => s.run('lone', 0, 20_000, q.query('lone')));
      await until(() => q.started.length === 2);
      assert.equal(q.running().length, 2, 'no more than the slots at once');
      for (let i = 0; i < 12; i++) {
        await until(() => q.running().length > 0);
        q.finish();
      }
      assert.equal((await Promise.all(answers)).length, 12);
      assert.ok(
        q.grants.every((g) => !g.serial),
        'a key alone keeps its parallel workers',
      );
    });

    it('when a key has a backlog of 50, then a second key’s query runs at the next free slot, and the two share the slots evenly', async () => {
      const s = scheduler();
      const q = controlled();
      const backlog = Array.from({ length: 50 }, () => s.run('busy', 0, 20_000, q.query('busy')));
      await until(() => q.started.length === 2);
      const quiet = [s.run('quiet', 0, 20_000, q.query('quiet')), s.run('quiet', 0, 20_000, q.query('quiet'))];
      await sleep(20); // the busy key's queries have used some database time
      q.finish('busy');
      await until(() => q.started.length === 3);
      assert.equal(q.started[2], 'quiet#51', 'the quiet key runs next, ahead of the 48 waiting');
      // The busy key now runs none and the quiet key one: the freed slot goes back to the busy key.
      q.finish('busy');
      await until(() => q.started.length === 4);
      assert.equal(q.started[3], 'busy#3', 'one slot each');
      // The quiet key's first query ends: its second takes the slot (it runs none, the busy key one).
      q.finish('quiet');
      await until(() => q.started.length === 5);
      assert.equal(q.started[4], 'quiet#52');
      assert.ok(
        q.grants.every((g) => !g.serial),
        'two keys within their share of two slots keep their workers',
      );
      q.finish('quiet');
      await Promise.all(quiet);
      for (let i = 0; i < 48; i++) {
        await until(() => q.running().length > 0);
        q.finish('busy');
      }
      assert.equal((await Promise.all(backlog)).length, 50, 'the busy key is slowed, not starved');
    });

    it('when a key runs above its share while another key is active, then it runs without parallel workers', async () => {
      const s = scheduler({ ...options, slots: 4 });
      const q = controlled();
      const busy = Array.from({ length: 4 }, () => s.run('busy', 0, 20_000, q.query('busy')));
      await until(() => q.started.length === 4);
      assert.ok(
        q.grants.every((g) => !g.serial),
        'alone, all four keep their workers',
      );
      const quiet = s.run('quiet', 0, 20_000, q.query('quiet'));
      q.finish('busy');
      await until(() => q.started.length === 5);
      const more = s.run('busy', 0, 20_000, q.query('busy'));
      q.finish('busy');
      await until(() => q.started.length === 6);
      // busy now runs 3 of 4 slots with quiet active: above its share of 2.
      assert.equal(q.started[5], 'busy#6');
      assert.equal(q.grants[5].serial, true);
      while (q.running().length > 0) q.finish();
      await Promise.all([...busy, quiet, more]);
    });

    it('when a key has an explicit cap, then its queries above it wait (not refused) while other keys use the free slots', async () => {
      const s = scheduler({ ...options, slots: 3 });
      const q = controlled();
      const capped = Array.from({ length: 3 }, () => s.run('capped', 1, 20_000, q.query('capped')));
      await until(() => q.started.length === 1);
      const other = s.run('other', 0, 20_000, q.query('other'));
      await until(() => q.started.length === 2);
      assert.equal(q.started[1], 'other#4');
      q.finish('capped');
      await until(() => q.started.length === 3);
      assert.equal(q.started[2], 'capped#2');
      while (q.running().length > 0 || q.started.length < 4) {
        await until(() => q.running().length > 0);
        q.finish();
      }
      assert.equal((await Promise.all([...capped, other])).length, 4);
    });

    it('when a key’s queue is full, then its next query is refused at once; when a query’s time limit passes while it waits, then it fails as timed out', async () => {
      const s = scheduler({ ...options, slots: 1, queueLimit: 2 });
      const q = controlled();
      const first = s.run('k', 0, 20_000, q.query('k'));
      await until(() => q.started.length === 1);
      const waiting = [s.run('k', 0, 20_000, q.query('k')), s.run('k', 0, 20_000, q.query('k'))];
      await assert.rejects(s.run('k', 0, 20_000, q.query('k')), QueueFull);
      // Another key's queue is its own.
      const late = s.run('other', 0, 150, q.query('other'));
      await assert.rejects(late, (err: unknown) => err instanceof QueueTimeout && err.waitedMs >= 140);
      while (q.started.length < 3 || q.running().length > 0) {
        await until(() => q.running().length > 0);
        q.finish();
      }
      await Promise.all([first, ...waiting]);
      assert.deepEqual(
        q.started.filter((id) => id.startsWith('other')),
        [],
        'the timed-out query never ran',
      );
    });

    it('when background work waits, then a user query that came after it runs first, and the background runs once no user query waits, without parallel workers', async () => {
      const s = scheduler({ ...options, slots: 1 });
      const q = controlled();
      const first = s.run('a', 0, 20_000, q.query('a'));
      await until(() => q.started.length === 1);
      const background = s.runBackground(20_000, q.query('bg'));
      const user = s.run('b', 0, 20_000, q.query('b'));
      q.finish('a');
      await until(() => q.started.length === 2);
      assert.equal(q.started[1], 'b#3', 'the user query goes ahead of the background work queued before it');
      q.finish('b');
      await until(() => q.started.length === 3);
      assert.equal(q.started[2], 'bg#2');
      assert.equal(q.grants[2].serial, true, 'background work runs without parallel workers');
      q.finish('bg');
      await Promise.all([first, background, user]);
    });

    it('when background work runs, then a key alone still takes the other slots with its parallel workers', async () => {
      const s = scheduler({ ...options, slots: 3 });
      const q = controlled();
      const background = s.runBackground(20_000, q.query('bg'));
      await until(() => q.started.length === 1);
      const lone = [s.run('lone', 0, 20_000, q.query('lone')), s.run('lone', 0, 20_000, q.query('lone'))];
      await until(() => q.started.length === 3);
      assert.deepEqual(
        q.grants.map((g) => g.serial),
        [true, false, false],
        'the background is no other key: the lone key is not above a share',
      );
      while (q.running().length > 0) q.finish();
      await Promise.all([background, ...lone]);
    });

    if (shared) {
      it('when background work waits in one process and a user query in another, then the freed slot goes to the user query', async () => {
        const one = scheduler({ ...options, slots: 1 });
        const two = scheduler({ ...options, slots: 1 });
        const q = controlled();
        const first = one.run('a', 0, 20_000, q.query('a'));
        await until(() => q.started.length === 1);
        const background = one.runBackground(20_000, q.query('bg'));
        const user = two.run('b', 0, 20_000, q.query('b'));
        // Process two's query is marked waiting in Redis before the slot frees (the order is then the scheduler's, not a race).
        await waitFor(
          'the user query marked waiting',
          () => client!.zRange(`${prefix}sched:wait`, 0, -1),
          (members) => members.some((m) => m.startsWith('b|')),
          5_000,
          5,
        );
        q.finish('a');
        await until(() => q.started.length === 2);
        assert.equal(q.started[1], 'b#3', 'process one leaves the slot to the user query of process two');
        q.finish('b');
        await until(() => q.started.length === 3);
        assert.equal(q.started[2], 'bg#2');
        q.finish('bg');
        await Promise.all([first, background, user]);
      });

      it('when two processes share Redis, then the slots are global and a quiet key of one process runs before the backlog of the other drains', async () => {
        const one = scheduler();
        const two = scheduler();
        const q = controlled();
        const backlog = Array.from({ length: 20 }, () => one.run('busy', 0, 20_000, q.query('busy')));
        await until(() => q.started.length === 2);
        const quiet = two.run('quiet', 0, 20_000, q.query('quiet'));
        // Process two sees both slots taken by process one: it waits.
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(q.started.length, 2, 'two slots in all, whichever process asks');
        q.finish('busy');
        await until(() => q.started.length === 3);
        assert.equal(q.started[2], 'quiet#21', 'process one leaves the freed slot to the more deserving key of process two');
        while (q.running().length > 0 || q.started.length < 21) {
          await until(() => q.running().length > 0);
          q.finish();
        }
        assert.equal((await Promise.all([...backlog, quiet])).length, 21);
      });
    }
  });
}
