/**
 * Each test run gets a fresh database on the real Postgres (README.md, "Quick start"): created
 * before the first test, migrated, given the nine sources, and dropped after the last one.
 *
 *   const { pool } = await testDatabase();
 *   await insertEvents('cloudflare.logs.prod', [{ event_message: 'hi', project: 'p1' }]);
 */
import { writeSync } from 'node:fs';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import type { SourceLookup } from '../../src/sources/schema.js';

const RUN = Symbol.for('logquery.test.databases');

/** The cluster where test databases are created (trust auth on this machine and in CI). */
export const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

/**
 * What this run created, kept on `globalThis` rather than in this module: mocha loads some files
 * through `require` and others through `import`, which gives this file (and the service's modules)
 * two instances; with module state the root hooks saw an empty list and dropped nothing. Only the
 * names and the closers are shared: a context stays with its instance, whose error classes its
 * app's error middleware recognises.
 */
interface RunDatabases {
  names: string[];
  closers: Array<() => Promise<void>>;
  /** The drops under way (a signal's, then the root hook's): the hook waits for a signal's before mocha exits. */
  dropping?: Promise<void>;
}
const run: RunDatabases = ((globalThis as { [RUN]?: RunDatabases })[RUN] ??= { names: [], closers: [] });
let created: Promise<{ url: string; name: string }> | undefined;
let context: Promise<AppContext> | undefined;

export function databaseUrl(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = '/' + name;
  return url.toString();
}

/** Creates an empty database with a unique name; the caller (or dropTestDatabases) drops it. */
export async function createEmptyDatabase(prefix = 'lq_test'): Promise<{ url: string; name: string }> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  run.names.push(name);
  return { url: databaseUrl(ADMIN_URL, name), name };
}

/**
 * A line on stderr, written synchronously: mocha runs with `exit: true` and ends the process right
 * after the root hooks, before an asynchronous write to a pipe would be flushed.
 */
export function report(line: string): void {
  writeSync(2, line + '\n');
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Configuration for a service instance on the test database. */
export function testConfig(url: string, env: Record<string, string> = {}): Config {
  // No request rate by default: every test file shares a few keys and sends as fast as it can (the fair
  // scheduler of queries never holds a key back while no other key waits).
  // test/endpoints/rate-limits.test.ts, test/endpoints/query-time-budget.test.ts and test/hardening/processes.test.ts set their own.
  // Nor a limit on unknown keys per address: every test connects from 127.0.0.1 (test/endpoints/unknown-keys.test.ts sets one).
  // The wall-clock protections (a Redis call's budget, the wait for a pooled connection) are set far
  // past their defaults: on a machine saturated by another process they would otherwise bypass the
  // cache or answer 503 in tests about something else. The tests of those protections set their own
  // (test/cache/guard.test.ts, test/hardening/faults.test.ts, test/endpoints/timeout.test.ts).
  return loadConfig({
    DATABASE_URL: url,
    LOAD_DEMO_DATA: 'false',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_SECOND: '0',
    MAX_CONCURRENT_QUERIES: '0',
    QUERY_TIME_PER_SECOND_MS: '0',
    UNKNOWN_KEY_LOOKUPS_PER_MINUTE: '0',
    CACHE_REDIS_TIMEOUT_MS: '5000',
    DB_CONNECT_TIMEOUT_MS: '60000',
    ...env,
  });
}

/** The shared, migrated test database with the nine sources. */
export async function testDatabase(): Promise<{ pool: pg.Pool; url: string; context: AppContext }> {
  const ctx = await testContext();
  return { pool: ctx.db.pool, url: ctx.db.url, context: ctx };
}

/** One AppContext on the shared test database (no HTTP server; tests make their own app). */
export function testContext(): Promise<AppContext> {
  created ??= createEmptyDatabase();
  context ??= created.then(async ({ url }) => {
    const ctx = await createContext(testConfig(url), createLogger('silent'));
    run.closers.push(() => ctx.close());
    return ctx;
  });
  return context;
}

/**
 * Stores events exactly as ingest does (stored shape, schema merged). Timestamps default to now.
 * Into the shared test database, or through `into` (a context on a database of its own).
 */
export async function insertEvents(sourceName: string, events: object[], into?: AppContext): Promise<void> {
  const ctx = into ?? (await testContext());
  const source = await ctx.sources.get(sourceName);
  const batch = normaliseEvents(events, { nowMs: Date.now(), retentionDays: source.retention_days });
  if (batch.errors.length) throw new Error(`invalid test events: ${JSON.stringify(batch.errors)}`);
  await ctx.writer.write(source, batch.rows, batch.fields);
}

/** The live source catalog of the test database. */
export async function loadSources(): Promise<SourceLookup> {
  const ctx = await testContext();
  await ctx.sources.reload();
  return ctx.sources.lookup;
}

/** A shared context that has not closed by then is left to DROP ... WITH (FORCE), which ends its connections. */
const CLOSE_WITHIN_MS = 15_000;
/** Drops at once: a DROP DATABASE waits for a checkpoint, and drops made together share one. */
const DROPS_AT_ONCE = 8;

/**
 * Root hook: close the shared contexts (one per module instance) and drop every database this run created. A drop that
 * fails is reported, not swallowed: a database left behind is a bug to see (README.md, "Tests").
 *
 * A context that fails or hangs while closing is reported and its database dropped anyway: before, the first
 * closer to throw ended the hook before any drop. The drops go several at once: on Postgres 15 each DROP
 * DATABASE waits for a checkpoint of its own, so a run's dozen or more databases dropped one after another
 * took a checkpoint each (six: 9.1 s one after another, 1.5 s together, on the shared 2-core machine at a
 * load of 8), and the hook has a minute before mocha gives up on it and exits with the rest still there.
 * With `closeContexts: false` (a run being interrupted) only the databases are dropped.
 */
export function dropTestDatabases(options: { closeContexts?: boolean } = {}): Promise<void> {
  const next = (run.dropping ?? Promise.resolve()).catch(() => undefined).then(() => dropNow(options));
  run.dropping = next;
  return next;
}

async function dropNow({ closeContexts = true }: { closeContexts?: boolean }): Promise<void> {
  const failures: string[] = [];
  const closers = run.closers.splice(0);
  if (closeContexts) {
    for (const close of closers) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not closed within ${CLOSE_WITHIN_MS} ms`)), CLOSE_WITHIN_MS);
      });
      await Promise.race([close(), late])
        .catch((err: Error) => failures.push(`a shared test context: ${err.message}`))
        .finally(() => clearTimeout(timer));
    }
  }
  const names = run.names.splice(0);
  for (let i = 0; i < names.length; i += DROPS_AT_ONCE) {
    await Promise.all(
      names.slice(i, i + DROPS_AT_ONCE).map((name) => dropDatabase(name).catch((err: Error) => failures.push(`${name}: ${err.message}`))),
    );
  }
  if (failures.length) report(`test databases not dropped, or contexts not closed:\n  ${failures.join('\n  ')}`);
}

/** `<prefix>_<pid>_<base36 time>_<random>`, as createEmptyDatabase names them. */
const TEST_DATABASE_NAME = /^lq_[a-z0-9_]+?_(\d+)_([0-9a-z]{6,10})_\d+$/;

/** A database older than this whose run is gone is an orphan; a younger one may belong to a run on another host. */
const ORPHAN_AGE_MS = 60 * 60 * 1000;

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Root hook: drops the test databases of runs that died before their own `afterAll` (a killed
 * mocha, a CI job cancelled): named as createEmptyDatabase names them, made more than an hour ago
 * (the time is in the name), by a process no longer running on this machine. Every other database
 * is left alone. A drop that fails is reported, not thrown: it must not stop the run.
 */
export async function dropOrphanedTestDatabases(nowMs = Date.now()): Promise<string[]> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  let names: string[];
  try {
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'lq\\_%'`);
    names = rows.map((r) => r.datname);
  } finally {
    await admin.end();
  }
  const orphans = names.filter((name) => {
    const match = TEST_DATABASE_NAME.exec(name);
    if (!match) return false;
    const pid = Number(match[1]);
    const created = parseInt(match[2], 36);
    return nowMs - created > ORPHAN_AGE_MS && created > Date.UTC(2024, 0, 1) && pid !== process.pid && !processIsAlive(pid);
  });
  const dropped: string[] = [];
  for (const name of orphans) {
    await dropDatabase(name).then(
      () => dropped.push(name),
      (err: Error) => report(`test database ${name} of a run that is gone not dropped: ${err.message}`),
    );
  }
  if (dropped.length) report(`dropped ${dropped.length} test databases of runs that are gone: ${dropped.join(', ')}`);
  return dropped;
}
