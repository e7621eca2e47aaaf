/**
 * `import logflare` in its own process, killed with SIGKILL in the middle of the events, then run
 * again: the second run completes the import and no event is there twice (each batch commits
 * with its cursor: src/import/logflare/events.ts).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { createEmptyDatabase } from '../support/db.js';
import { waitFor } from '../support/wait.js';
import { buildOriginal, type OriginalInstall } from '../import/original.js';
import type { ImportReport } from '../../src/import/logflare/index.js';

function startImport(env: Record<string, string>, original: OriginalInstall) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'import', 'logflare', '--from', original.url, '--schema', '_analytics', '--batch-size', '25'],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, out: () => out, err: () => err };
}

describe('import logflare killed mid-way', function () {
  this.timeout(300_000);
  let pool: pg.Pool | undefined;
  after(async () => {
    await pool?.end();
  });

  it('when the import is SIGKILLed in the middle of the events and run again, then every event is there exactly once', async () => {
    const original = await buildOriginal({ eventsPerSourceDay: 100 });
    const { url } = await createEmptyDatabase('lq_import_kill');
    const env = { DATABASE_URL: url, LOAD_DEMO_DATA: 'false', LOG_LEVEL: 'silent' };
    const target = new pg.Pool({ connectionString: url, max: 2 });
    pool = target;
    const imported = async () =>
      Number(
        (
          await target
            .query<{ n: string }>('SELECT coalesce(sum(events + rejected), 0) AS n FROM logflare_import_days')
            .catch(() => ({ rows: [{ n: '0' }] }))
        ).rows[0].n,
      );

    const first = startImport(env, original);
    const atKill = await waitFor('some events imported', imported, (n) => n >= 500, 120_000, 20);
    first.child.kill('SIGKILL');
    assert.equal((await first.exited).signal, 'SIGKILL');
    const left = await imported();
    assert.ok(
      left < original.totalEvents - 1,
      `killed mid-way: ${left} of ${original.totalEvents} events were in (${atKill} when the kill was sent)`,
    );

    const second = startImport(env, original);
    const { code } = await second.exited;
    assert.equal(code, 0, second.err());
    const report = JSON.parse(second.out()) as ImportReport;
    assert.equal(
      report.events.reduce((n, e) => n + e.imported, 0),
      original.totalEvents - 1,
      'every event but the one the write path refuses',
    );
    assert.equal(report.run.events + left, original.totalEvents, 'the second run read what the first had not committed');
    assert.match(second.err(), /100% [\d,]+\/[\d,]+ events, [\d,]+ events\/s/);

    for (const s of original.sources) {
      const { rows } = await target.query<{ table_name: string }>('SELECT table_name FROM sources WHERE id = $1', [s.token]);
      const counted: pg.QueryResult<{ n: string; distinct: string }> = await target.query(
        `SELECT count(*) AS n, count(DISTINCT id) AS distinct FROM logs."${rows[0].table_name}"`,
      );
      const expected = original.events.get(s.name)!.filter((e) => e.id !== original.refusedEventId).length;
      assert.equal(Number(counted.rows[0].distinct), expected, `${s.name}: every event`);
      assert.equal(Number(counted.rows[0].n), expected, `${s.name}: no event twice`);
    }
  });
});
