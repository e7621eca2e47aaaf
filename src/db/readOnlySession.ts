/**
 * The reader role and the read-only sessions of its connections: facts of the database that the
 * reader pool (readerPool.ts) opens connections with and the executor (src/query/execute.ts)
 * relies on when it opens a query's transaction on them.
 */
import type pg from 'pg';

/** The role endpoint queries run as: it can only SELECT log tables (migrations/). */
export const READER_ROLE = 'logquery_reader';

export interface ReadOnlySession {
  statementTimeoutMs: number;
}

/** Pools opened with readOnlySessionOptions (the reader's own connections). */
const readOnlySessions = new WeakMap<pg.Pool, ReadOnlySession>();

/**
 * Startup options (pg's `options`) that give a connection the settings of a query's transaction
 * for its whole session, for a pool whose connections run endpoint queries only
 * (src/db/readerPool.ts). Options from the startup packet take precedence over settings of the
 * role or the database (`ALTER ROLE … SET standard_conforming_strings = off` does not apply).
 *
 * security: the session keeps them because every query on it ends in ROLLBACK (or the connection
 * is dropped), and a rollback undoes every SET and `set_config(…, false)` made in the
 * transaction; default_transaction_read_only is one more guard for anything that would ever run
 * outside BEGIN READ ONLY on these connections.
 */
export function readOnlySessionOptions(statementTimeoutMs: number): string {
  const timeout = Math.floor(statementTimeoutMs);
  return `-c default_transaction_read_only=on -c statement_timeout=${timeout} -c TimeZone=UTC ${PLANNER_OPTIONS} -c standard_conforming_strings=on`;
}

/**
 * Planner settings of every endpoint query, on a reader connection (startup options) or in the
 * transaction of the fallback (SET LOCAL, src/query/execute.ts), and of the benchmarks'
 * hand-written floors, so both are planned alike. jit off: compiling costs more than it saves on these short queries.
 * parallel_tuple_cost 0.02 (default 0.1): a scan narrowed before grouping (src/sql/postgres/narrow.ts)
 * hands every row it keeps to the leader, and at the default price the planner keeps a 7-day
 * aggregate on one core even though its workers would halve it (BENCHMARKS.md, "Hot leaves").
 * max_parallel_workers_per_gather 1 (default 2): the leader and one worker. With a second worker
 * three processes share the machine's two cores, and once hot columns let a 7-day aggregate run
 * as an index-only scan the contention costs more than the worker brings (usage daily 400–650 ms
 * with two workers, 250–320 ms with one or none; the JSON path keeps its halving with one).
 */
export const PLANNER_SETTINGS: Readonly<Record<string, string>> = {
  jit: 'off',
  parallel_tuple_cost: '0.02',
  max_parallel_workers_per_gather: '1',
};

/** PLANNER_SETTINGS as startup options (`-c name=value`), for a session or a pool. */
export const PLANNER_OPTIONS = Object.entries(PLANNER_SETTINGS)
  .map(([name, value]) => `-c ${name}=${value}`)
  .join(' ');

/** The session settings of a pool registered below; undefined for any other pool. */
export function readOnlySessionOf(pool: pg.Pool): ReadOnlySession | undefined {
  return readOnlySessions.get(pool);
}

/** Marks a pool whose connections were opened with readOnlySessionOptions(statementTimeoutMs). */
export function registerReadOnlySession(pool: pg.Pool, statementTimeoutMs: number): void {
  readOnlySessions.set(pool, { statementTimeoutMs: Math.floor(statementTimeoutMs) });
}
