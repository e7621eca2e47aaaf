/**
 * The embedded default database: PGlite (Postgres compiled to WASM, in this process) served over
 * the Postgres wire protocol on a loopback port, so the rest of the service connects to it with
 * the ordinary `pg` driver, exactly as it would to a real server.
 *
 * How it is wired, and why not `PGLiteSocketServer` as is
 * -------------------------------------------------------
 * PGlite is a single Postgres backend: one session, one query at a time. pglite-socket's
 * `PGLiteSocketServer` lets several TCP connections share it (option `maxConnections`, default 1;
 * with 1, back-to-back pools/migration runs fail because the next connection is refused while the
 * previous one is still closing). Its internal queue hands the backend to one connection for the
 * duration of an explicit transaction block (BEGIN … COMMIT), but otherwise switches connections
 * between *individual protocol messages*. An extended-protocol query is several messages
 * (Parse, Bind, Describe, Execute, Sync) sharing the unnamed statement/portal; if another
 * connection's messages run between them, the first query fails ("portal "" does not exist") or
 * binds its parameters to the other connection's statement. `pg` usually sends the whole batch in
 * one write, so this is rare, but not impossible (a large parameter split across TCP reads;
 * cursors, which span round trips). Reproduced with pglite-socket 0.2.17.
 *
 * So this module keeps pglite-socket's per-connection protocol handler (`PGLiteSocketHandler`:
 * message framing, SSL refusal) and its own small net server, and replaces the queue with
 * `ExclusiveBackendQueue`: a connection that starts sending messages owns the backend until the
 * backend answers ReadyForQuery with status Idle, i.e. until its query batch is complete and it is
 * not inside a transaction (an aborted transaction keeps ownership until ROLLBACK). Others wait.
 * Named prepared statements are renamed per connection (`c<id>_<name>`) so two pool clients can
 * each prepare "q1" (stock: "prepared statement "q1" already exists"), and are closed when their
 * connection goes away. Cleanup output is discarded explicitly: PGlite keeps the last
 * `onRawData` callback, so a plain `execProtocolRaw` would write into another client's socket.
 *
 * Consequences for callers (limitations; none of them apply to a real Postgres)
 * ---------------------------------------------------------------------------
 * - Queries from all connections run one at a time. A pool of N clients works (nothing fails),
 *   it just does not run in parallel.
 * - Transactions are isolated by mutual exclusion: while one client is inside BEGIN … COMMIT no
 *   other client's statement runs (they queue; they are not rejected). Therefore code must never
 *   wait for another pool query while holding a transaction open on a different client — that
 *   deadlocks here forever (on real Postgres it works). A client leaked inside a transaction (or
 *   one that sent half a query batch) blocks the whole database until its connection closes
 *   (which rolls the transaction back). node-pg-migrate's single-client runs are fine.
 * - Everything that is per session in Postgres is shared by all connections: `SET` (session
 *   level; `SET LOCAL` inside a transaction is fine), `SET ROLE` without LOCAL, temporary tables,
 *   session advisory locks (they never block each other: it is all one session), SQL-level
 *   `PREPARE`/`EXECUTE` names (protocol-level named statements are renamed, see above), LISTEN.
 *   Use `SET LOCAL …` inside a transaction for per-request settings.
 * - No timeouts: `statement_timeout` (SET or SET LOCAL) is accepted but never fires (measured:
 *   pg_sleep(1.5) and a 7 s query under a 100 ms timeout both complete), and CancelRequest is
 *   ignored by pglite-socket. A runaway query holds the database until it finishes; bound work
 *   by other means (LIMITs, narrow time ranges) and time out on the client side if needed
 *   (the connection is then still busy: discard that client).
 * - PGlite 0.5.14 is Postgres 18.6; no lz4 (`COMPRESSION lz4` fails with 0A000; pglz only).
 *   Roles, GRANT, SET LOCAL ROLE (privileges are enforced), PARTITION BY RANGE, jsonb functions
 *   and regular expressions work as on Postgres. pg_trgm is loaded from PGlite's contrib bundle
 *   (search indexes, src/storage/searchIndexes.ts).
 * - One process per data directory: PGlite takes no effective lock (a second process opening a
 *   `dataDir` that is in use starts without error), and two writers would corrupt it.
 * - `stop()` closes open connections from the server side; end your `pg.Pool` first (or have a
 *   pool 'error' listener) so idle clients are not reported as errors.
 */
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketHandler, type PGLiteSocketHandlerOptions } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` — no password needed. */
  url: string;
  /** Closes client connections, the socket server and PGlite (flushing data to `dataDir`). Idempotent. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Data directory, created if missing. */
  dataDir: string;
  /** Loopback port; 0 (default) picks a free one. */
  port?: number;
  /** Most client connections at once (default 64); more are refused with SQLSTATE 53300. */
  maxConnections?: number;
  /** Diagnostics (start/stop, refused connections, socket errors). Nothing is logged otherwise. */
  log?: (msg: string) => void;
}

const HOST = '127.0.0.1';

/** Starts PGlite with data in `dataDir` (created if missing) and serves it over the Postgres wire protocol on 127.0.0.1 at `port` (0 = pick a free port). */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => {});
  const maxConnections = options.maxConnections ?? 64;
  const dataDir = path.resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  const lockFile = await lockDataDir(dataDir);

  const started = Date.now();
  // pg_trgm is shipped with PGlite as a contrib bundle: loaded so the migration can create it and
  // the embedded database gets search indexes too (src/storage/searchIndexes.ts).
  const db = await PGlite.create({ dataDir, extensions: { pg_trgm } }).catch(async (err) => {
    await rm(lockFile, { force: true });
    throw err;
  });
  log(`embedded postgres: PGlite ready in ${Date.now() - started} ms (data in ${dataDir})`);

  const queue = new ExclusiveBackendQueue(db, log);
  const handlers = new Set<PGLiteSocketHandler>();
  let stopping = false;

  const server = net.createServer((socket) => {
    socket.on('error', (err) => log(`embedded postgres: client socket error: ${err.message}`));
    if (stopping) {
      socket.destroy();
      return;
    }
    if (handlers.size >= maxConnections) {
      log(`embedded postgres: refused a connection (${maxConnections} open)`);
      socket.end(errorResponse('53300', `sorry, too many clients already (embedded postgres allows ${maxConnections})`));
      return;
    }
    const handler = new PGLiteSocketHandler({
      // The handler only calls enqueue / clearQueueForHandler / clearTransactionIfNeeded, which
      // ExclusiveBackendQueue implements; the declared type is a class with private fields.
      queryQueue: queue as unknown as PGLiteSocketHandlerOptions['queryQueue'],
      closeOnDetach: true,
    });
    handlers.add(handler);
    const forget = () => handlers.delete(handler);
    handler.addEventListener('close', forget);
    handler.addEventListener('error', forget);
    handler.attach(socket).catch((err: Error) => {
      forget();
      log(`embedded postgres: could not attach a connection: ${err.message}`);
      socket.destroy();
    });
  });
  server.on('error', (err) => log(`embedded postgres: server error: ${err.message}`));

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await db.close();
    await rm(lockFile, { force: true });
    throw err;
  }
  const { port } = server.address() as net.AddressInfo;
  const url = `postgresql://postgres@${HOST}:${port}/postgres`;
  log(`embedded postgres: listening on ${HOST}:${port} (started in ${Date.now() - started} ms)`);

  let stopped: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Detaching rolls back an open transaction and drops the connection's queued messages.
        await Promise.allSettled([...handlers].map((h) => h.detach(true)));
        handlers.clear();
        await closed;
        await queue.idle();
        await db.close();
        await rm(lockFile, { force: true });
        log('embedded postgres: stopped');
      })();
      return stopped;
    },
  };
}

/**
 * PGlite opens a data directory without any lock, and two processes writing one directory
 * corrupt it. A lock file with the owner's pid refuses a second process (a stale file of a
 * process that is gone is taken over).
 */
async function lockDataDir(dataDir: string): Promise<string> {
  const lockFile = path.join(dataDir, 'logquery.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockFile, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return lockFile;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number((await readFile(lockFile, 'utf8').catch(() => '')).trim());
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new Error(`the embedded database in ${dataDir} is in use by process ${owner}; stop it first, or set DATABASE_URL`);
      }
      await rm(lockFile, { force: true });
    }
  }
  throw new Error(`cannot lock the embedded database in ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface Pending {
  handlerId: number;
  /** Runs with the backend owned by `handlerId`; returns whether the backend is now idle (release ownership). */
  run(): Promise<boolean>;
  fail(err: Error): void;
}

const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);
/** Simple Query 'ROLLBACK'. */
const ROLLBACK = new Uint8Array([0x51, 0, 0, 0, 13, ...new TextEncoder().encode('ROLLBACK'), 0]);

/**
 * Serialises all connections onto the single PGlite backend. A connection owns the backend from
 * its first message until PGlite answers ReadyForQuery 'I' (batch finished, no transaction open).
 * Implements the interface `PGLiteSocketHandler` expects of its `queryQueue`.
 */
class ExclusiveBackendQueue {
  private pending: Pending[] = [];
  private owner: number | null = null;
  private draining = false;
  private drained: Promise<void> = Promise.resolve();
  /** Per connection: its named prepared statements (renamed), to close when it goes away. */
  private statements = new Map<number, Set<string>>();

  constructor(
    private readonly db: PGlite,
    private readonly log: (msg: string) => void,
  ) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.pending.push({
        handlerId,
        fail: reject,
        run: async () => {
          const msg = this.renameStatements(handlerId, message);
          let bytes = 0;
          const tail = new Uint8Array(6);
          let tailLen = 0;
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(msg, {
              onRawData: (data) => {
                bytes += data.length;
                for (const b of data.length > 6 ? data.subarray(data.length - 6) : data) {
                  if (tailLen === 6) tail.copyWithin(0, 1);
                  else tailLen++;
                  tail[tailLen - 1] = b;
                }
                onData(data);
              },
            }),
          );
          resolve(bytes);
          // ReadyForQuery is always the last message of a response: 'Z', int32 5, status.
          const readyIdle =
            tailLen === 6 && tail[0] === 0x5a && tail[1] === 0 && tail[2] === 0 && tail[3] === 0 && tail[4] === 5 && tail[5] === 0x49;
          return readyIdle && !this.db.isInTransaction();
        },
      });
      this.kick();
    });
  }

  getQueueLength(): number {
    return this.pending.length;
  }

  /** The connection went away: its queued messages are dropped. */
  clearQueueForHandler(handlerId: number): void {
    const dropped = this.pending.filter((p) => p.handlerId === handlerId);
    this.pending = this.pending.filter((p) => p.handlerId !== handlerId);
    for (const p of dropped) p.fail(new Error('connection closed'));
  }

  /**
   * The connection went away: if it owned the backend (mid-batch or in a transaction), end the
   * batch and roll back; close its prepared statements; release the backend.
   */
  clearTransactionIfNeeded(handlerId: number): Promise<void> {
    const statements = this.statements.get(handlerId);
    this.statements.delete(handlerId);
    if (this.owner !== handlerId && !statements?.size) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.pending.unshift({
        handlerId,
        fail: () => resolve(),
        run: async () => {
          try {
            await this.db.runExclusive(async () => {
              const parts: Uint8Array[] = [];
              for (const name of statements ?? []) parts.push(closeStatement(name));
              parts.push(SYNC);
              // Raw protocol (db.exec() would wait for the mutex held here), with the output
              // discarded: PGlite keeps the last onRawData callback and execProtocolRaw() would
              // stream into it, i.e. into the socket of whichever connection ran last.
              const discard = { onRawData: () => {} };
              await this.db.execProtocolRawStream(concat(parts), discard);
              if (this.db.isInTransaction()) await this.db.execProtocolRawStream(ROLLBACK, discard);
            });
          } catch (err) {
            this.log(`embedded postgres: cleanup after a closed connection failed: ${(err as Error).message}`);
          }
          resolve();
          return true;
        },
      });
      this.kick();
    });
  }

  /** Resolves when nothing is running. */
  async idle(): Promise<void> {
    while (this.draining) await this.drained;
  }

  private kick(): void {
    if (this.draining) return;
    this.draining = true;
    this.drained = this.drain();
  }

  private async drain(): Promise<void> {
    // `draining` is cleared in the same synchronous step as the last look at `pending` (the
    // finally below runs right at `return`, no await between), so an enqueue() can never slip in
    // between and be left waiting.
    try {
      for (;;) {
        const i = this.owner === null ? (this.pending.length > 0 ? 0 : -1) : this.pending.findIndex((p) => p.handlerId === this.owner);
        if (i < 0) return; // idle, or waiting for the owner's next message
        const [item] = this.pending.splice(i, 1);
        this.owner = item.handlerId;
        let release: boolean;
        try {
          release = await item.run();
        } catch (err) {
          // PGlite reports SQL errors inside the protocol stream; a throw here means the backend itself failed.
          this.log(`embedded postgres: backend error: ${(err as Error).message}`);
          item.fail(err as Error);
          release = true;
        }
        if (release) this.owner = null;
      }
    } finally {
      this.draining = false;
    }
  }

  /** Parse / Bind / Describe / Close carry statement names: prefix them per connection. */
  private renameStatements(handlerId: number, msg: Uint8Array): Uint8Array {
    const type = msg[0];
    const prefix = `c${handlerId}_`;
    if (type === 0x50 /* P */) {
      const end = msg.indexOf(0, 5);
      if (end === 5) return msg; // unnamed
      const name = prefix + decoder.decode(msg.subarray(5, end));
      let set = this.statements.get(handlerId);
      if (!set) this.statements.set(handlerId, (set = new Set()));
      set.add(name);
      return rebuild(msg, 5, end, name);
    }
    if (type === 0x42 /* B */) {
      const portalEnd = msg.indexOf(0, 5);
      const end = msg.indexOf(0, portalEnd + 1);
      if (end === portalEnd + 1) return msg;
      return rebuild(msg, portalEnd + 1, end, prefix + decoder.decode(msg.subarray(portalEnd + 1, end)));
    }
    if ((type === 0x44 /* D */ || type === 0x43) /* C */ && msg[5] === 0x53 /* 'S' */) {
      const end = msg.indexOf(0, 6);
      if (end === 6) return msg;
      const name = prefix + decoder.decode(msg.subarray(6, end));
      if (type === 0x43) this.statements.get(handlerId)?.delete(name);
      return rebuild(msg, 6, end, name);
    }
    return msg;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `msg` with bytes [start, end) replaced by `replacement`, length field updated. */
function rebuild(msg: Uint8Array, start: number, end: number, replacement: string): Uint8Array {
  const repl = encoder.encode(replacement);
  const out = new Uint8Array(msg.length - (end - start) + repl.length);
  out.set(msg.subarray(0, start), 0);
  out.set(repl, start);
  out.set(msg.subarray(end), start + repl.length);
  new DataView(out.buffer).setInt32(1, out.length - 1);
  return out;
}

function closeStatement(name: string): Uint8Array {
  const n = encoder.encode(name);
  const out = new Uint8Array(1 + 4 + 1 + n.length + 1);
  out[0] = 0x43; // 'C'
  new DataView(out.buffer).setInt32(1, out.length - 1);
  out[5] = 0x53; // 'S'
  out.set(n, 6);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A FATAL ErrorResponse, for refusing a connection before startup. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head[0] = 0x45; // 'E'
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}
