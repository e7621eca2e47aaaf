/**
 * Ordering evidence for scheduling tests, from the database itself instead of wall-clock races.
 *
 * `holdTable` takes a log table's ACCESS EXCLUSIVE lock in a transaction of its own: a query that
 * reads the table then waits inside Postgres, holding its scheduler slot, until the test lets go.
 * So a test can freeze the slots, queue what it wants behind them, and only then let the
 * scheduler choose, however slow the machine is.
 *
 * `QueryStarts` samples pg_stat_activity and keeps every endpoint query it sees (backend and the
 * start of its transaction, Postgres's own clock), named by the log table it reads: the order in
 * which the database started them. A query that started and ended between two samples is missed,
 * so a check of "nothing of X started before Y" can only be too lenient, never flake.
 *
 * The table a query reads is taken from pg_locks (the lock it holds or waits for), not from the
 * text in pg_stat_activity: Postgres keeps only the first track_activity_query_size bytes of it
 * (1 kB by default), and a translated query spells out its source's columns in a CTE first, so
 * the table's name and the test's own SQL are past the cut once the source has enough hot leaves
 * (the edge source's defaults passed 1 kB in 75fb33c).
 */
import pg from 'pg';
import { READER_ROLE } from '../../src/db/readOnlySession.js';
import { sleep } from './wait.js';

export interface HeldTable {
  /** Commits the lock's transaction: the queries waiting on it go on. */
  release(): Promise<void>;
}

/** Holds `logs.<table>` locked (ACCESS EXCLUSIVE: readers wait) until `release()`. */
export async function holdTable(databaseUrl: string, table: string): Promise<HeldTable> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE logs.${pg.escapeIdentifier(table)} IN ACCESS EXCLUSIVE MODE`);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await client.query('COMMIT').catch(() => undefined);
      await client.end();
    },
  };
}

export interface StartedQuery {
  /** The name the test gave the table it reads. */
  kind: string;
  pid: number;
  /**
   * The start of its transaction (pg_stat_activity.xact_start), in microseconds since the epoch:
   * Postgres's clock for every backend. Not query_start: with the extended protocol that moves at
   * each step of one statement (parse, then execute once a held lock is let go).
   */
  startedUs: number;
  /** Seen waiting for a lock (a held table) at least once. */
  waitedOnLock: boolean;
}

export class QueryStarts {
  private readonly seen = new Map<string, StartedQuery>();
  /** The most watched queries seen active at once. */
  most = 0;
  private running = true;
  private readonly loop: Promise<void>;

  private constructor(
    private readonly client: pg.Client,
    /** Table (in the logs schema) to the test's name for the queries that read it. */
    private readonly kinds: Map<string, string>,
  ) {
    this.loop = this.sample();
  }

  /**
   * Samples until `stop()` the endpoint queries that read one of `tables` (the test's name for
   * them to a table of the logs schema). Endpoint queries are those of backends logged in as the
   * reader role (src/db/readerPool.ts): the service's own reads of a table (upkeep, statistics)
   * log in as the service and are not counted.
   */
  static async watch(databaseUrl: string, tables: Record<string, string>): Promise<QueryStarts> {
    const kinds = new Map(Object.entries(tables).map(([kind, table]) => [table, kind]));
    if (kinds.size !== Object.keys(tables).length) throw new Error('QueryStarts: one table per kind');
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return new QueryStarts(client, kinds);
  }

  private async sample(): Promise<void> {
    const tables = [...this.kinds.keys()];
    while (this.running) {
      // A backend's relation locks (granted, or the one it waits for) name the tables its
      // statement reads; the lock of a partitioned table's parent is taken first.
      const { rows } = await this.client.query<{ pid: number; us: string; table: string; lock: boolean }>(
        `select distinct a.pid, (extract(epoch from a.xact_start) * 1e6)::bigint::text as us, c.relname as table,
                a.wait_event_type is not distinct from 'Lock' as lock
           from pg_stat_activity a
           join pg_locks l on l.pid = a.pid and l.locktype = 'relation'
                          and l.database = (select oid from pg_database where datname = current_database())
           join pg_class c on c.oid = l.relation
          where a.datname = current_database() and a.state = 'active' and a.pid <> pg_backend_pid()
            and a.usename = $1 and c.relnamespace = 'logs'::regnamespace and c.relname = any($2)`,
        [READER_ROLE, tables],
      );
      const active = new Set<number>();
      for (const row of rows) {
        const kind = this.kinds.get(row.table)!;
        active.add(row.pid);
        const id = `${row.pid}@${row.us}`;
        const known = this.seen.get(id);
        if (known) known.waitedOnLock ||= row.lock;
        else this.seen.set(id, { kind, pid: row.pid, startedUs: Number(row.us), waitedOnLock: row.lock });
      }
      this.most = Math.max(this.most, active.size);
      await sleep(5);
    }
  }

  /** Every query seen so far, in the order the database started them. */
  get started(): StartedQuery[] {
    return [...this.seen.values()].sort((a, b) => a.startedUs - b.startedUs);
  }

  /** The queries seen so far, to ask later which started after them (startedSince). */
  mark(): ReadonlySet<string> {
    return new Set(this.seen.keys());
  }

  /** The queries seen since `mark`, in the order the database started them. */
  startedSince(mark: ReadonlySet<string>): StartedQuery[] {
    return [...this.seen.entries()]
      .filter(([id]) => !mark.has(id))
      .map(([, q]) => q)
      .sort((a, b) => a.startedUs - b.startedUs);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.client.end();
  }
}
