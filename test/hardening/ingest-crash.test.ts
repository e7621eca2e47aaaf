/**
 * Durability: the real service (`src/main.ts` in its own process) is killed with SIGKILL while
 * batches stream in, then restarted on the same database. Every batch answered 200 must be
 * there in full; no batch may be there in part.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { createEmptyDatabase } from '../support/db.js';
import { startService, type ServiceProcess } from './support.js';

const PROJECT = 'ingest-crash';
const ADMIN_KEY = 'crash-test-admin-key-0123456789';
const BATCH_SIZE = 500;
const CLIENTS = 4;

function batch(batchId: string): object {
  const now = Date.now();
  return {
    batch: Array.from({ length: BATCH_SIZE }, (_, i) => ({
      id: `${batchId}-${i}`,
      timestamp: now - i,
      event_message: batchId,
      project: PROJECT,
      metadata: { request: { method: 'POST', path: `/rest/v1/t${i}` }, response: { status_code: 200 } },
    })),
  };
}

describe('Ingest durability across a crash', function () {
  this.timeout(180_000);
  let service: ServiceProcess | undefined;
  let pool: pg.Pool | undefined;

  after(async () => {
    await service?.kill();
    await pool?.end();
  });

  it('when the service is SIGKILLed mid-stream, then every acknowledged batch is complete and no batch is partial', async () => {
    const { url } = await createEmptyDatabase('lq_crash');
    const env = { DATABASE_URL: url, ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'error' };
    service = await startService(env);
    const port = service.port;

    const acknowledged = new Set<string>();
    const sent: string[] = [];
    let killed = false;
    let seq = 0;
    const post = (batchId: string) =>
      fetch(`http://127.0.0.1:${port}/api/logs?source_name=cloudflare.logs.prod`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-KEY': ADMIN_KEY },
        body: JSON.stringify(batch(batchId)),
      }).then(
        async (res) => {
          if (res.status === 200) {
            const body = (await res.json()) as { count: number };
            assert.equal(body.count, BATCH_SIZE);
            acknowledged.add(batchId);
          }
        },
        () => undefined,
      ); // the connection died with the service: unknown outcome

    const victim = service;
    const client = async () => {
      while (!killed) {
        const batchId = `crash-${seq++}`;
        sent.push(batchId);
        await post(batchId);
        if (!killed && acknowledged.size >= 12) {
          killed = true;
          // Other clients' batches are normally in flight right now; on a loaded machine they may all
          // have been answered, so this client sends one more and kills without waiting for it.
          const last = `crash-${seq++}`;
          sent.push(last);
          const lastPost = post(last);
          victim.child.kill('SIGKILL');
          await lastPost;
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    await victim.exited;
    assert.ok(acknowledged.size >= 12);

    service = await startService(env, { port });

    pool = new pg.Pool({ connectionString: url, max: 2 });
    const { rows } = await pool.query<{ batch: string; n: number }>(
      'SELECT event_message AS batch, count(*)::int AS n FROM logs.cloudflare_logs_prod WHERE project = $1 GROUP BY 1',
      [PROJECT],
    );
    const counts = new Map(rows.map((r) => [r.batch, r.n]));
    for (const id of acknowledged) assert.equal(counts.get(id), BATCH_SIZE, `acknowledged batch ${id} is complete`);
    for (const [id, n] of counts) assert.equal(n, BATCH_SIZE, `batch ${id} is all or nothing (found ${n})`);
    assert.ok(sent.length > acknowledged.size, 'some batches were in flight when the service died');

    // And the restarted service takes new batches.
    await post('crash-after-restart');
    assert.ok(acknowledged.has('crash-after-restart'));

    service.child.kill('SIGTERM');
    await service.exited;
  });
});
