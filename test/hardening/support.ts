/**
 * Hardening test support: the real service in a child process, a TCP proxy that can be cut
 * (a database or cache that goes away and comes back), and small measuring helpers.
 * Everything listens on 127.0.0.1 only; every helper has a stop that the tests call in `after`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import pg from 'pg';
import { freePort } from '../support/net.js';
import { sleep } from '../support/wait.js';

export { freePort };

export { OwnRedis } from '../cache/support.js';
export { eventually, sleep } from '../support/wait.js';

/**
 * A TCP proxy on 127.0.0.1 in front of `target`. `cut()` drops every open connection and stops
 * listening (new connections are refused: the database is gone); `blackhole()` accepts
 * connections and never answers (the database hangs); `restore()` forwards again on the same port.
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private mode: 'forward' | 'blackhole' = 'forward';
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  /** Connections accepted so far (forwarded or swallowed). */
  accepted = 0;
  /** Called with the size of every chunk a client sends upstream (to cut in the middle of a write). */
  onClientChunk: ((bytes: number) => void) | undefined;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), target);
    await proxy.listen();
    return proxy;
  }

  /** Open client-side connections right now. */
  get open(): number {
    let n = 0;
    for (const s of this.sockets) if ((s as net.Socket & { isClient?: boolean }).isClient) n++;
    return n;
  }

  private listen(): Promise<void> {
    const server = net.createServer((client) => {
      this.accepted++;
      (client as net.Socket & { isClient?: boolean }).isClient = true;
      this.track(client);
      if (this.mode === 'blackhole') {
        client.on('data', () => undefined);
        return;
      }
      const upstream = net.connect(this.target.port, this.target.host);
      this.track(upstream);
      client.on('data', (chunk: Buffer) => this.onClientChunk?.(chunk.length));
      client.pipe(upstream);
      upstream.pipe(client);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      client.on('close', () => this.pairs.delete(pair));
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  /** Drops every connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Drops every connection; new ones are accepted and never answered. */
  async blackhole(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.mode = 'blackhole';
    if (!this.server) await this.listen();
  }

  /**
   * Established connections stop passing data (both directions, connections stay open: a
   * network partition mid-query); new connections are accepted and never answered.
   * `restore()` lets the held data through again.
   */
  freeze(): void {
    this.mode = 'blackhole';
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Forwards again (on the same port). */
  async restore(): Promise<void> {
    for (const [client, upstream] of this.pairs) {
      if (client.destroyed || upstream.destroyed || client.readableFlowing !== false) continue;
      client.pipe(upstream);
      upstream.pipe(client);
    }
    if (this.mode === 'blackhole') {
      for (const s of this.sockets) s.destroy();
      this.sockets.clear();
    }
    this.mode = 'forward';
    if (!this.server) await this.listen();
  }

  async stop(): Promise<void> {
    await this.cut();
  }
}

export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  base: string;
  /** Everything the process wrote to stderr (and stdout, when `captureStdout`). */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running, and wait for it. */
  kill(): Promise<void>;
}

/** `node --import tsx src/main.ts` (one process, no npx wrapper, so signals reach the service itself). */
export async function startService(
  env: Record<string, string>,
  options: { nodeArgs?: string[]; readyTimeoutMs?: number; /** a restart on the port clients already use */ port?: number } = {},
): Promise<ServiceProcess> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, ['--import', 'tsx', ...(options.nodeArgs ?? []), 'src/main.ts'], {
    // No per-key limits unless a test sets them: these tests drive one key as hard as they can.
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOAD_DEMO_DATA: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_SECOND: '0',
      MAX_CONCURRENT_QUERIES: '0',
      QUERY_TIME_PER_SECOND_MS: '0',
      // One key's queries queue for the database's slots however many it sends (no 429 past 64 waiting).
      QUERY_QUEUE_LIMIT: '1000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = {
    child,
    port,
    base,
    output: () => out,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the service exited early (${child.exitCode ?? child.signalCode}): ${out.slice(-2000)}`);
    const ok = await fetch(`${base}/ready`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return service;
    if (Date.now() > deadline) {
      await service.kill();
      throw new Error(`the service did not become ready: ${out.slice(-2000)}`);
    }
    await sleep(200);
  }
}

/** p50 / p95 / p99 / max of a list of milliseconds. */
/**
 * The rows each ingest batch of `project` left in cloudflare.logs.prod (its events carry the
 * batch id as event_message), to tell a whole batch from a partial one.
 */
export async function rowsPerBatch(db: Pick<pg.Pool, 'query'>, project: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ batch: string; n: number }>(
    'SELECT event_message AS batch, count(*)::int AS n FROM logs.cloudflare_logs_prod WHERE project = $1 GROUP BY 1',
    [project],
  );
  return new Map(rows.map((r) => [r.batch, r.n]));
}

export function percentiles(ms: number[]): { n: number; p50: number; p95: number; p99: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0);
  return { n: s.length, p50: round(at(0.5)), p95: round(at(0.95)), p99: round(at(0.99)), max: round(s[s.length - 1] ?? 0) };
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** Asserts the error envelope (docs/API.md, "Errors") and returns it. */
export function envelopeOf(status: number, text: string): { code: number; status: string; message: string; errors: unknown[] } {
  let body: { error?: { code: number; status: string; message: string; errors: unknown[] } };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`status ${status}: body is not JSON: ${text.slice(0, 300)}`);
  }
  const e = body.error;
  if (
    !e ||
    e.code !== status ||
    typeof e.status !== 'string' ||
    typeof e.message !== 'string' ||
    !Array.isArray(e.errors) ||
    e.errors.length === 0
  ) {
    throw new Error(`status ${status}: not the error envelope: ${text.slice(0, 300)}`);
  }
  return e;
}

/** Writes a log line for the report (visible in the mocha output). */
export function report(line: string, figures?: object): void {
  process.stdout.write(`      [hardening] ${line}${figures ? ' ' + JSON.stringify(figures) : ''}\n`);
}

/**
 * A throwaway Postgres cluster of this test (never the shared one): initdb into a temporary
 * directory owned by `postgres` (initdb refuses root), trust auth, its own port on 127.0.0.1
 * and its socket in the same directory. `stop()` / `start()` take it down and up; `destroy()`
 * stops it and removes the directory.
 */
export class ThrowawayPostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {}

  get url(): string {
    return this.databaseUrl('postgres');
  }

  databaseUrl(database: string): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Creates the empty database `name` in this cluster and gives its URL. */
  async createDatabase(name: string): Promise<string> {
    const admin = new pg.Client({ connectionString: this.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    return this.databaseUrl(name);
  }

  static async create(): Promise<ThrowawayPostgres> {
    const { mkdtempSync, readdirSync, chownSync } = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const versions = readdirSync('/usr/lib/postgresql').sort();
    const bin = `/usr/lib/postgresql/${versions[versions.length - 1]}/bin`;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lq-hardening-pg-'));
    const { uid, gid } = await userIds('postgres');
    chownSync(dir, uid, gid);
    const pgInstance = new ThrowawayPostgres(dir, await freePort(), bin);
    await pgInstance.asPostgres([`${bin}/initdb`, '-D', `${dir}/data`, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    await pgInstance.start();
    return pgInstance;
  }

  /**
   * A streaming standby of this cluster: `pg_basebackup -R` (it writes primary_conninfo and
   * standby.signal) into a directory of its own, started on its own port. The initdb defaults
   * already allow it: wal_level replica, max_wal_senders 10, trust for replication on 127.0.0.1.
   */
  async standby(): Promise<ThrowawayPostgres> {
    const { mkdtempSync, chownSync } = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lq-hardening-standby-'));
    const { uid, gid } = await userIds('postgres');
    chownSync(dir, uid, gid);
    const standby = new ThrowawayPostgres(dir, await freePort(), this.bin);
    await this.asPostgres([
      `${this.bin}/pg_basebackup`,
      '-D',
      `${dir}/data`,
      '-h',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-U',
      'postgres',
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
    await standby.start();
    return standby;
  }

  async start(): Promise<void> {
    await this.asPostgres([
      `${this.bin}/pg_ctl`,
      '-D',
      `${this.dir}/data`,
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-l',
      `${this.dir}/log`,
      '-w',
      '-t',
      '30',
      'start',
    ]);
  }

  async stop(): Promise<void> {
    await this.asPostgres([`${this.bin}/pg_ctl`, '-D', `${this.dir}/data`, '-m', 'fast', '-w', '-t', '30', 'stop']);
  }

  async destroy(): Promise<void> {
    const { rmSync, existsSync } = await import('node:fs');
    if (existsSync(`${this.dir}/data/postmaster.pid`)) await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private asPostgres(argv: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn('runuser', ['-u', 'postgres', '--', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(`${argv[0]} exited ${code}: ${out.slice(-1000)}`));
      });
    });
  }
}

async function userIds(name: string): Promise<{ uid: number; gid: number }> {
  const { readFileSync } = await import('node:fs');
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(name + ':'));
  if (!line) throw new Error(`no user ${name}`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
