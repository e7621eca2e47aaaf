/**
 * The service in place of the original's image in Supabase's self-hosted docker-compose.yml
 * (docs/MIGRATING.md), replayed natively: `src/main.ts` started with exactly the environment that
 * file gives its `analytics` container (supabase/supabase, docker/docker-compose.yml), against a
 * throwaway database laid out like the original's `_supabase` (schema `_analytics`, with months
 * of data reduced to a few days). Only the port differs (4000 in the stack; a free one here) and
 * the user (`supabase_admin` there; this cluster's superuser here).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { freePort } from '../support/net.js';
import { waitFor } from '../support/wait.js';
import { ADMIN_URL } from '../support/db.js';
import { buildOriginal, schemaSnapshot, type OriginalInstall } from '../import/original.js';

const PUBLIC_TOKEN = 'stack-public-token-0123456789abcdef';
const PRIVATE_TOKEN = 'stack-private-token-0123456789abcdef';
const PASSWORD = 'your-super-secret-and-long-postgres-password';

describe('In the Supabase stack: the analytics container replaced', function () {
  this.timeout(240_000);
  let original: OriginalInstall;
  let child: ChildProcess | undefined;
  let output = '';
  let base = '';
  let db: pg.Pool;
  let snapshot: string;

  before(async () => {
    original = await buildOriginal({ eventsPerSourceDay: 10 });
    snapshot = await schemaSnapshot(original.url, '_analytics');
    db = new pg.Pool({ connectionString: original.url, max: 2 });
    const admin = new URL(ADMIN_URL);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // docker/docker-compose.yml, service `analytics`, its `environment:` with the stack's values filled in.
    const stack: Record<string, string> = {
      LOGFLARE_NODE_HOST: '127.0.0.1',
      DB_USERNAME: admin.username,
      DB_DATABASE: original.name,
      DB_HOSTNAME: admin.hostname,
      DB_PORT: admin.port || '5432',
      DB_PASSWORD: PASSWORD,
      DB_SCHEMA: '_analytics',
      LOGFLARE_PUBLIC_ACCESS_TOKEN: PUBLIC_TOKEN,
      LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE_TOKEN,
      LOGFLARE_SINGLE_TENANT: 'true',
      LOGFLARE_SUPABASE_MODE: 'true',
      POSTGRES_BACKEND_URL: `postgresql://${admin.username}:${PASSWORD}@${admin.hostname}:${admin.port || '5432'}/${original.name}`,
      POSTGRES_BACKEND_SCHEMA: '_analytics',
      LOGFLARE_FEATURE_FLAG_OVERRIDE: 'multibackend=true',
    };
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...stack, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  });

  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((resolve) => child!.once('exit', resolve));
    }
    await db?.end();
  });

  it('when it starts with the stack environment, then /health on its port answers 200 as the stack health check wants', async () => {
    const status = await waitFor(
      'the service healthy',
      () =>
        fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) }).then(
          (r) => r.status,
          () => 0,
        ),
      (s) => s === 200 || child?.exitCode !== null,
      90_000,
      200,
    );
    assert.equal(status, 200, output.slice(-3000));
  });

  it("when it has started, then its tables are in their own schemas and the original's data has come over", async () => {
    const finished = await waitFor(
      'the import at start finished',
      () =>
        db.query<{ n: string }>('SELECT count(*) AS n FROM logquery.logflare_import_runs WHERE finished_at IS NOT NULL').then(
          (r) => Number(r.rows[0].n),
          () => 0,
        ),
      (n) => n > 0,
      120_000,
      200,
    );
    assert.equal(finished, 1, output.slice(-3000));
    const { rows } = await db.query<{ ours: string | null; inPublic: string | null; logs: string | null }>(
      `SELECT to_regclass('logquery.endpoints') AS ours, to_regclass('public.endpoints') AS "inPublic", to_regclass('logs.cloudflare_logs_prod') AS logs`,
    );
    assert.deepEqual(rows[0], { ours: 'logquery.endpoints', inPublic: null, logs: 'logs.cloudflare_logs_prod' });
    const edge = original.sources.find((s) => s.name === 'cloudflare.logs.prod')!;
    const { rows: events } = await db.query<{ n: string }>('SELECT count(*) AS n FROM logs.cloudflare_logs_prod');
    assert.equal(Number(events[0].n), original.events.get(edge.name)!.length);
  });

  it('when a shipper ingests with the stack tokens and a client queries, then both work as against the original', async () => {
    const edge = original.sources.find((s) => s.name === 'cloudflare.logs.prod')!;
    const ingest = await fetch(`${base}/api/logs?source=${edge.token}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-KEY': PUBLIC_TOKEN },
      body: JSON.stringify({ event_message: 'GET /rest/v1/x', project: 'default', metadata: { response: { status_code: 503 } } }),
    });
    assert.equal(ingest.status, 200, await ingest.text());
    const statusCodes = original.endpoints.find((e) => e.name === 'status.codes')!;
    const res = await fetch(`${base}/api/endpoints/query/${statusCodes.token}`, { headers: { Authorization: `Bearer ${PRIVATE_TOKEN}` } });
    assert.equal(res.status, 200, await res.clone().text());
    const rows = ((await res.json()) as { result: { n: number; errors: number }[] }).result;
    const events = original.events.get(edge.name)!.length;
    assert.equal(
      rows.reduce((n, r) => n + r.n, 0),
      events + 1,
    );
    assert.equal(
      rows.reduce((n, r) => n + r.errors, 0),
      Math.ceil(10 / 7) * 4 + 1,
    );
  });

  it("when it has run, then the original's schema is exactly as it was", async () => {
    assert.equal(await schemaSnapshot(original.url, '_analytics'), snapshot);
  });

  it('when it is stopped as docker stops it (SIGTERM), then it exits 0', async () => {
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child!.kill('SIGTERM');
    assert.equal(await exited, 0, output.slice(-3000));
  });
});
