/**
 * Ordering evidence for scheduling tests, from the database itself instead of wall-clock races.
 *
 * `holdTable` takes a log table's ACCESS EXCLUSIVE lock in a transaction of its own: a query that
 * reads the table then waits inside Postgres, holding its scheduler slot, until the test lets go.
 * So a test can freeze the slots, queue what it wants behind them, and only then let the
 * scheduler choose, however slow the machine is.
 *
 * `QueryStarts` samples pg_stat_activity and keeps every query it sees (backend and the start of
 * its transaction, Postgres's own clock), named by the test's matchers: the order in which the
 * database started them. A query that started and ended between two samples is missed, so a check
 * of "nothing of X started before Y" can only be too lenient, never flake.
 */
import pg from 'pg';
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
  /** The name of the matcher that knew it. */
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
  /** The most matched queries seen active at once. */
  most = 0;
  private running = true;
  private readonly loop: Promise<void>;

  private constructor(
    private readonly client: pg.Client,
    private readonly kinds: Record<string, (query: string) => boolean>,
  ) {
    this.loop = this.sample();
  }

  /** Samples until `stop()` the queries of other backends that one of `kinds` knows by their text. */
  static async watch(databaseUrl: string, kinds: Record<string, (query: string) => boolean>): Promise<QueryStarts> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return new QueryStarts(client, kinds);
  }

  private async sample(): Promise<void> {
    while (this.running) {
      const { rows } = await this.client.query<{ pid: number; us: string; query: string; lock: boolean }>(
        `select pid, (extract(epoch from xact_start) * 1e6)::bigint::text as us, query, wait_event_type = 'Lock' as lock
           from pg_stat_activity
          where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
      );
      let active = 0;
      for (const row of rows) {
        const kind = Object.keys(this.kinds).find((k) => this.kinds[k](row.query));
        if (!kind) continue;
        active += 1;
        const id = `${row.pid}@${row.us}`;
        const known = this.seen.get(id);
        if (known) known.waitedOnLock ||= row.lock;
        else this.seen.set(id, { kind, pid: row.pid, startedUs: Number(row.us), waitedOnLock: row.lock });
      }
      this.most = Math.max(this.most, active);
      await sleep(5);
    }
  }

  /** Every query seen so far, in the order the database started them. */
  get started(): StartedQuery[] {
    return [...this.seen.values()].sort((a, b) => a.startedUs - b.startedUs);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.client.end();
  }
}
