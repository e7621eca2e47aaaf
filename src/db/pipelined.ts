/**
 * The only module that touches `pg` internals. `pg` has no public way to send several
 * extended-protocol statements behind one Sync (its `pipeline` mode sends a Sync per query, so a
 * failed statement does not stop the next ones), nor to see the bytes a client receives before a
 * whole row is buffered. Both are needed by the read-only executor (src/query/execute.ts):
 *
 * - runPipelined: statements, one query with values, more statements, then ONE Sync, written
 *   together. Postgres runs them in order and at the first error skips everything up to the Sync,
 *   so nothing after a failed statement runs (the executor relies on this to fail closed).
 * - watchReceivedBytes: counts bytes on the client's socket and destroys it past a limit.
 * - toWireValue: a JS value as `pg` would send it (its own `prepareValue`).
 *
 * What is relied on, and checked by test/db/pg-contract.test.ts against the real Postgres: the
 * client's private `connection` with `stream`, `parse`, `bind`, `describe`, `execute`, `sync`,
 * `sendCopyFail`; `pg/lib/utils` `prepareValue`; the submittable callbacks `Client#query` calls
 * (handleRowDescription with `{fields: [{name, dataTypeID}]}`, handleDataRow with `{fields:
 * [text | null]}`, handleCommandComplete, handleEmptyQuery, handleError, handleReadyForQuery,
 * handleCopyInResponse) and its reading of `query_timeout` from the submittable. A `pg` upgrade
 * that changes any of these fails that test, naming the version.
 */
import { createRequire } from 'node:module';
import type pg from 'pg';

const require = createRequire(import.meta.url);

/** The installed `pg`, for error messages. */
export const PG_VERSION: string = (require('pg/package.json') as { version: string }).version;

export type WireValue = string | Buffer | null;

export interface PipelinedRun {
  fields: Array<{ name: string; dataTypeID: number }>;
  rows: Array<Array<string | null>>;
}

export interface PipelinedBatch {
  /** Statements without values, run before the query, each its own Parse/Bind/Execute. */
  before: readonly string[];
  /** The query: one statement (the extended protocol parses exactly one), rows as text. */
  query: { text: string; values: readonly WireValue[] };
  /** Statements run after the query (for instance ROLLBACK); skipped if anything before failed. */
  after: readonly string[];
}

const prepareValue = (require('pg/lib/utils.js') as { prepareValue?: (value: unknown) => WireValue }).prepareValue;

/** `value` as the text (or bytes) `pg` sends for it; throws for a value `pg` cannot send. */
export function toWireValue(value: unknown): WireValue {
  if (typeof prepareValue !== 'function') throw new PgInternalsError(['pg/lib/utils.js no longer exports prepareValue']);
  return prepareValue(value);
}

/**
 * Runs `batch` on `client` in one round trip. Resolves with the query's fields and rows when
 * every statement completed; rejects with the first error (Postgres skipped the rest), with
 * 'Query read timeout' when no answer came within `readTimeoutMs` (then the client is unusable),
 * or with PgInternalsError, before anything is sent, when `pg` no longer has what this needs.
 */
export function runPipelined(client: pg.ClientBase, batch: PipelinedBatch, readTimeoutMs: number): Promise<PipelinedRun> {
  const problems = connectionProblems(client);
  if (problems.length) return Promise.reject(new PgInternalsError(problems));
  return new Promise<PipelinedRun>((resolve, reject) => {
    void client.query(new Batch(batch, readTimeoutMs, (err, res) => (err ? reject(err) : resolve(res!))));
  });
}

export interface ByteWatch {
  /** True once more than the limit arrived (the socket was destroyed then). */
  readonly exceeded: boolean;
  stop(): void;
}

/**
 * Counts the bytes `client` receives from now on; past `limit` its socket is destroyed (the
 * backend stops at its next write, the query in flight fails). `pg` buffers a whole row before
 * handing it over, so a limit on rows cannot stop one huge row; this can.
 */
export function watchReceivedBytes(client: pg.ClientBase, limit: number): ByteWatch {
  const stream = privateConnection(client)?.stream;
  if (!stream || typeof stream.on !== 'function' || typeof stream.destroy !== 'function')
    throw new PgInternalsError(['client.connection.stream is not a socket']);
  let received = 0;
  let exceeded = false;
  const count = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit && !exceeded) {
      exceeded = true;
      stream.destroy();
    }
  };
  stream.on('data', count);
  return {
    get exceeded() {
      return exceeded;
    },
    stop: () => void stream.removeListener('data', count),
  };
}

/** `pg` lacks something this module relies on: a `pg` upgrade changed its internals. */
export class PgInternalsError extends Error {
  constructor(readonly problems: string[]) {
    super(`pg ${PG_VERSION} internals changed (src/db/pipelined.ts): ${problems.join('; ')}`);
    this.name = 'PgInternalsError';
  }
}

/** What of the private connection this module uses is missing on `client` (empty: all there). */
export function connectionProblems(client: pg.ClientBase): string[] {
  const con = privateConnection(client);
  if (!con || typeof con !== 'object') return ['client.connection is missing'];
  const problems: string[] = [];
  for (const method of ['parse', 'bind', 'describe', 'execute', 'sync', 'sendCopyFail'] as const) {
    if (typeof con[method] !== 'function') problems.push(`client.connection.${method} is not a function`);
  }
  if (!con.stream || typeof con.stream.write !== 'function') problems.push('client.connection.stream is not a writable stream');
  return problems;
}

interface PrivateConnection {
  stream: NodeJS.ReadWriteStream & { destroy(): void; cork?(): void; uncork?(): void };
  parse(query: { text: string }): void;
  bind(config: { values?: readonly WireValue[] }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: Record<string, never>): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

function privateConnection(client: pg.ClientBase): PrivateConnection | undefined {
  return (client as unknown as { connection?: PrivateConnection }).connection;
}

/**
 * A `pg` submittable (the interface pg-cursor uses): `Client#query` calls `submit` with the
 * connection when the client is free, then the handle* callbacks as the answers arrive, and
 * reads `query_timeout` from it as its client-side read limit.
 */
class Batch implements pg.Submittable {
  private readonly fields: PipelinedRun['fields'] = [];
  private readonly rows: PipelinedRun['rows'] = [];
  /** Statements completed so far; the query is number `before.length`. */
  private completed = 0;
  private done = false;

  constructor(
    private readonly batch: PipelinedBatch,
    readonly query_timeout: number,
    /** Called once; pg's read timeout wraps and replaces it. */
    public callback: (err: Error | null, result?: PipelinedRun) => void,
  ) {}

  submit(connection: pg.Connection): void {
    const con = connection as unknown as PrivateConnection;
    con.stream.cork?.();
    try {
      for (const text of this.batch.before) this.statement(con, text);
      con.parse({ text: this.batch.query.text });
      con.bind({ values: this.batch.query.values });
      con.describe({ type: 'P', name: '' });
      con.execute({});
      for (const text of this.batch.after) this.statement(con, text);
      con.sync();
    } finally {
      con.stream.uncork?.();
    }
  }

  private statement(con: PrivateConnection, text: string): void {
    con.parse({ text });
    con.bind({});
    con.execute({});
  }

  private get inQuery(): boolean {
    return this.completed === this.batch.before.length;
  }

  handleRowDescription(msg: { fields: PipelinedRun['fields'] }): void {
    if (this.inQuery) this.fields.push(...msg.fields);
  }

  handleDataRow(msg: { fields: Array<string | null> }): void {
    if (this.inQuery) this.rows.push(msg.fields);
  }

  handleCommandComplete(): void {
    this.completed++;
  }

  handleEmptyQuery(): void {
    this.completed++;
  }

  handleError(err: Error): void {
    if (this.done) return;
    this.done = true;
    this.callback(err);
  }

  handleReadyForQuery(): void {
    if (this.done) return;
    this.done = true;
    const expected = this.batch.before.length + 1 + this.batch.after.length;
    if (this.completed !== expected) this.callback(new Error(`pipelined batch: ${this.completed} of ${expected} statements completed`));
    else this.callback(null, { fields: this.fields, rows: this.rows });
  }

  handlePortalSuspended(): void {}
  /**
   * A query that is COPY … FROM STDIN puts the backend in copy-in mode, where it ignores Sync. With
   * statements after the query, the next message (a Parse) is a protocol violation and the backend
   * ends the connection (08P01: nothing after the COPY runs). With none, the batch's Sync was
   * swallowed and the backend would wait for one after the CopyFail forever, so one more is sent.
   */
  handleCopyInResponse(connection: pg.Connection): void {
    const con = connection as unknown as PrivateConnection;
    con.sendCopyFail('COPY is not supported here');
    if (this.batch.after.length === 0) con.sync();
  }
  handleCopyData(): void {}
}
