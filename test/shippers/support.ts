/**
 * Shipper tests: the in-process app on a random port (real clients need a URL), a source of
 * their own, and its rows read back from the log table.
 */
import http from 'node:http';
import type { Listener } from '../../src/http/server.js';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import { createContext } from '../../src/context.js';
import { createHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import type { SourceRecord } from '../../src/sources/repository.js';
import { createEmptyDatabase, testConfig } from '../support/db.js';
import { testApp, type TestApp } from '../support/http.js';
import { listenLocally } from '../support/net.js';

export interface Served extends TestApp {
  base: string;
  close(): Promise<void>;
}

export async function serveTestApp(): Promise<Served> {
  return serve(await testApp());
}

/**
 * A service on a database of its own (dropped at the end of the run), for tests that must post
 * to the default sources with fields of their own: on the shared database those fields would
 * join the sources' schemas and show up in other files' `select *`.
 */
export async function serveOwnApp(): Promise<Served> {
  const { url } = await createEmptyDatabase('lq_shippers');
  const context = await createContext(testConfig(url), createLogger('silent'));
  const keys = { admin: generateKey(), query: generateKey(), ingest: generateKey() };
  await context.keys.create('admin', keys.admin, ['admin']);
  await context.keys.create('query', keys.query, ['query']);
  await context.keys.create('ingest', keys.ingest, ['ingest']);
  const app: Listener = await createApp(context);
  const served = await serve({ app, context, keys });
  return {
    ...served,
    close: async () => {
      await served.close();
      await context.close();
    },
  };
}

async function serve(t: TestApp): Promise<Served> {
  const server: http.Server = createHttpServer(t.app);
  const { base } = await listenLocally(server);
  return {
    ...t,
    base,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A new source for one test file (its own table, so counts are exact). */
export async function freshSource(t: TestApp, prefix: string): Promise<SourceRecord> {
  return t.context.sources.create({ name: `${prefix}.${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}` });
}

export interface StoredRow {
  id: string;
  /** ISO to the microsecond, UTC. */
  ts: string;
  event_message: string | null;
  project: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- whatever the shipper sent, asserted on field by field
  metadata: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
  body: any;
}

/** Every row of a source, oldest first (ties by id). */
export async function sourceRows(t: TestApp, source: SourceRecord): Promise<StoredRow[]> {
  const { rows } = await t.context.db.pool.query(
    `SELECT id, to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ts, event_message, project, metadata, body
       FROM logs."${source.table_name}" ORDER BY "timestamp", id`,
  );
  return rows;
}
