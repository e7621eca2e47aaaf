/**
 * A throwaway pg_auto_failover formation (Debian's `postgresql-15-auto-failover`, installed by
 * .ci/run; docs/OPERATIONS.md): a monitor and two Postgres nodes on loopback ports, in a temp
 * directory owned by `postgres`, each `pg_autoctl` run as `postgres` in its own process group.
 * Never the shared cluster on 5432.
 *
 * The monitor's health checks are shortened (a node is declared failed after about 3 s instead
 * of 20 s, the old primary is given 5 s instead of 30 s to demote itself) so a failover takes
 * seconds; what the engine decides, and in which order, is its own. `fsync` is off on the nodes
 * (they die by SIGKILL, not by a power cut: the OS keeps what was written), which keeps the
 * shared machine's disk out of the figures; `synchronous_commit = on` and the engine's
 * `synchronous_standby_names` are what make an acknowledged COMMIT survive.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, sleep } from './support.js';

const MONITOR_SETTINGS: Record<string, string> = {
  'pgautofailover.health_check_period': '1000',
  'pgautofailover.health_check_timeout': '1000',
  'pgautofailover.health_check_max_retries': '1',
  'pgautofailover.health_check_retry_delay': '500',
  'pgautofailover.node_considered_unhealthy_timeout': '3000',
  'pgautofailover.primary_demote_timeout': '5000',
};

export interface FormationNode {
  name: string;
  port: number;
  pgdata: string;
  /** The running `pg_autoctl` (keeper and its Postgres), undefined once killed. */
  keeper: ChildProcess | undefined;
}

export class AutoFailoverFormation {
  readonly nodes: FormationNode[] = [];
  private monitor: ChildProcess | undefined;
  private readonly bin: string;

  private constructor(
    readonly dir: string,
    readonly monitorPort: number,
    readonly database: string,
  ) {
    const versions = readdirSync('/usr/lib/postgresql').sort();
    this.bin = `/usr/lib/postgresql/${versions[versions.length - 1]}/bin`;
  }

  /** Monitor, then node1 (becomes the primary), then node2 (its synchronous standby). */
  static async create(database = 'lq'): Promise<AutoFailoverFormation> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'lq-hardening-paf-'));
    const { uid, gid } = postgresIds();
    for (const sub of ['', 'xdg', 'xdg/config', 'xdg/data', 'xdg/run']) {
      mkdirSync(path.join(dir, sub), { recursive: true });
      chownSync(path.join(dir, sub), uid, gid);
    }
    const formation = new AutoFailoverFormation(dir, await freePort(), database);
    try {
      await formation.startMonitor();
      await formation.addNode('node1');
      await formation.waitFor((s) => s.node1 === 'single/single', 60_000, 'node1 single');
      // The nodes are killed, never power-cut: fsync buys nothing here (see above). node2 gets
      // this setting with its base backup.
      await formation.onNode('node1', 'postgres', (c) =>
        c.query('ALTER SYSTEM SET fsync = off').then(() => c.query('SELECT pg_reload_conf()')),
      );
      await formation.addNode('node2');
      // node2's pg_basebackup waits for a spread checkpoint (minutes on an idle cluster);
      // asking for an immediate one finishes it.
      await formation.waitFor(
        (s) => s.node1 === 'primary/primary' && s.node2 === 'secondary/secondary',
        90_000,
        'node2 secondary',
        () => formation.onNode('node1', 'postgres', (c) => c.query('CHECKPOINT')).catch(() => undefined),
      );
    } catch (err) {
      await formation.destroy();
      throw err;
    }
    return formation;
  }

  /** libpq's multi-host URL of the two nodes, as an operator writes DATABASE_URL. */
  get serviceUrl(): string {
    return `postgresql://postgres@${this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/${this.database}?target_session_attrs=read-write`;
  }

  node(name: string): FormationNode {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name}`);
    return node;
  }

  /** `reported/assigned` state of each node, from the monitor. */
  async states(): Promise<Record<string, string>> {
    const client = new pg.Client({ connectionString: this.monitorUrl('autoctl_node'), connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ name: string; state: string }>(
        "SELECT nodename AS name, reportedstate || '/' || goalstate AS state FROM pgautofailover.node",
      );
      return Object.fromEntries(rows.map((r) => [r.name, r.state]));
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Waits until `done(states)`, calling `meanwhile` between looks; throws naming `what` with the last states. */
  async waitFor(
    done: (s: Record<string, string>) => boolean,
    timeoutMs: number,
    what: string,
    meanwhile?: () => Promise<unknown>,
  ): Promise<number> {
    const started = Date.now();
    let last: Record<string, string> = {};
    while (Date.now() - started < timeoutMs) {
      last = await this.states().catch(() => last);
      if (done(last)) return Date.now() - started;
      await meanwhile?.();
      await sleep(250);
    }
    throw new Error(`pg_auto_failover: ${what} not reached in ${timeoutMs} ms; states ${JSON.stringify(last)}`);
  }

  /** The node the monitor reports as primary (or wait_primary: the primary without its standby). */
  async primaryName(): Promise<string> {
    const states = await this.states();
    const name = Object.keys(states).find((n) => /^(primary|wait_primary)\//.test(states[n]));
    if (!name) throw new Error(`no primary: ${JSON.stringify(states)}`);
    return name;
  }

  /** Runs `work` on a connection to `database` on the node (its own port, wherever its role). */
  async onNode<T>(name: string, database: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: this.node(name).port,
      user: 'postgres',
      database,
      connectionTimeoutMillis: 3000,
    });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /**
   * The machine of `name` dies: SIGKILL to its pg_autoctl keeper and its Postgres at once (their
   * process group). Killing only the postmaster would not be a failover: the keeper restarts it.
   */
  async kill(name: string): Promise<void> {
    const node = this.node(name);
    const keeper = node.keeper;
    node.keeper = undefined;
    if (!keeper?.pid) return;
    const exited = new Promise<void>((resolve) => (keeper.exitCode !== null ? resolve() : keeper.once('exit', () => resolve())));
    try {
      process.kill(-keeper.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
    await exited;
  }

  /** Starts the node's keeper again: it rejoins the formation (as a standby when another is primary). */
  restart(name: string): void {
    const node = this.node(name);
    node.keeper = this.spawnAsPostgres(['pg_autoctl', 'run', '--pgdata', node.pgdata], `${name}.log`);
  }

  async destroy(): Promise<void> {
    for (const node of this.nodes) await this.kill(node.name);
    if (this.monitor?.pid && this.monitor.exitCode === null) {
      const exited = new Promise<void>((resolve) => this.monitor!.once('exit', () => resolve()));
      try {
        process.kill(-this.monitor.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
      await exited;
    }
    // Backends notice their postmaster's death within a moment; then the files can go.
    await sleep(500);
    // Not all of them: the monitor's health check worker (pg_auto_failover's background worker) was
    // seen alive 12 minutes after its postmaster's SIGKILL, with the logger it writes to. Any
    // process still working in one of the formation's directories goes with it.
    killProcessesIn(this.dir);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private monitorUrl(user: string): string {
    return `postgresql://${user}@127.0.0.1:${this.monitorPort}/pg_auto_failover?sslmode=disable`;
  }

  private async startMonitor(): Promise<void> {
    this.monitor = this.spawnAsPostgres(
      [
        'pg_autoctl',
        'create',
        'monitor',
        '--pgdata',
        path.join(this.dir, 'monitor'),
        '--pgport',
        String(this.monitorPort),
        '--hostname',
        '127.0.0.1',
        '--auth',
        'trust',
        '--no-ssl',
        '--pgctl',
        `${this.bin}/pg_ctl`,
        '--run',
      ],
      'monitor.log',
    );
    const started = Date.now();
    for (;;) {
      const ok = await this.states().then(
        () => true,
        () => false,
      );
      if (ok) break;
      if (Date.now() - started > 60_000) throw new Error('pg_auto_failover monitor did not start');
      await sleep(250);
    }
    const admin = new pg.Client({ connectionString: this.monitorUrl('postgres') });
    await admin.connect();
    try {
      for (const [name, value] of Object.entries(MONITOR_SETTINGS)) await admin.query(`ALTER SYSTEM SET ${name} = ${value}`);
      await admin.query('SELECT pg_reload_conf()');
    } finally {
      await admin.end();
    }
  }

  private async addNode(name: string): Promise<void> {
    const node: FormationNode = { name, port: await freePort(), pgdata: path.join(this.dir, name), keeper: undefined };
    this.nodes.push(node);
    node.keeper = this.spawnAsPostgres(
      [
        'pg_autoctl',
        'create',
        'postgres',
        '--pgdata',
        node.pgdata,
        '--pgport',
        String(node.port),
        '--hostname',
        '127.0.0.1',
        '--name',
        name,
        '--dbname',
        this.database,
        '--auth',
        'trust',
        '--no-ssl',
        '--pgctl',
        `${this.bin}/pg_ctl`,
        '--monitor',
        this.monitorUrl('autoctl_node'),
        '--run',
      ],
      `${name}.log`,
    );
  }

  /** `argv` as `postgres`, in its own process group (so a kill takes its children too), logging to the formation's directory. */
  private spawnAsPostgres(argv: string[], log: string): ChildProcess {
    const env = {
      PATH: `${this.bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      XDG_CONFIG_HOME: path.join(this.dir, 'xdg/config'),
      XDG_DATA_HOME: path.join(this.dir, 'xdg/data'),
      XDG_RUNTIME_DIR: path.join(this.dir, 'xdg/run'),
      PG_CONFIG: `${this.bin}/pg_config`,
    };
    const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    return spawn('runuser', ['-u', 'postgres', '--', 'sh', '-c', `exec ${quoted} >> '${path.join(this.dir, log)}' 2>&1`], {
      env,
      detached: true,
      stdio: 'ignore',
    });
  }
}

/** SIGKILL to every process whose working directory is `dir` or below it (a Postgres process works in its data directory). */
function killProcessesIn(dir: string): void {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`).replace(/ \(deleted\)$/, '');
    } catch {
      continue; // gone, or not ours to read
    }
    if (cwd !== dir && !cwd.startsWith(dir + '/')) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

function postgresIds(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('no user postgres');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
