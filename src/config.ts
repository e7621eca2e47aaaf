/**
 * Configuration, parsed and validated once at start-up. Nothing else reads process.env.
 * A bad value fails start with one line that names the variable and what to change.
 */
import { availableParallelism } from 'node:os';
import { splitDatabaseUrl } from './db/databaseUrl.js';
import { isIP } from 'node:net';
import cron from 'node-cron';

export interface Config {
  readonly port: number;
  readonly host: string;
  /**
   * Unset: the embedded Postgres (PGlite) under `dataDir`. Without DATABASE_URL, built from the
   * variables the Supabase stack gives the original's container (DB_HOSTNAME, DB_USERNAME, …;
   * docs/MIGRATING.md).
   */
  readonly databaseUrl: string | undefined;
  /**
   * The schema of the service's own tables (endpoints, sources, keys, …): `public`, or
   * `logquery` when the database is the original's (built from its variables), so they stay out
   * of its schemas. Log tables are in schema `logs` either way.
   */
  readonly databaseSchema: string;
  /** Where an install of the original keeps its data, when its variables say (docs/MIGRATING.md). */
  readonly logflare: LogflareOrigin | undefined;
  readonly dataDir: string;
  /** Read replicas (streaming standbys of databaseUrl) for endpoint queries (src/db/replicas.ts). */
  readonly databaseReadUrls: readonly string[];
  /** A replica further behind the primary than this is skipped until it catches up. */
  readonly maxReplicaLagMs: number;
  /** How often replicas are checked (up, lag). */
  readonly replicaCheckIntervalMs: number;
  /** Unset: an in-process cache. */
  readonly redisUrl: string | undefined;
  /**
   * HOURLY_SPLIT (default true; it needs REDIS_URL, without which it is off): aggregates over closed
   * hours from Redis (src/query/hourlySplit.ts, docs/ARCHITECTURE.md "Hourly partials"); every
   * process of an install must agree.
   */
  readonly hourlySplit: boolean;
  /**
   * HOURLY_WARM_REPORTS (default true; with the hourly split): the hours of Studio's report queries
   * are computed for the busiest projects before anyone opens a report (src/query/reportWarmup.ts).
   */
  readonly hourlyWarmReports: boolean;
  /**
   * Time budget of one call to the result cache's Redis: past it the cache is skipped for a second
   * (src/cache/guard.ts). Raise it where Redis is far away or the machine is saturated.
   */
  readonly cacheRedisTimeoutMs: number;
  readonly queryTimeoutMs: number;
  /** Pool size of the service's connections to Postgres. */
  readonly dbPoolSize: number;
  /** How long a request waits for a free connection before answering 503. */
  readonly dbConnectTimeoutMs: number;
  /** Bootstrap keys: registered (hashed) at start with the given scopes. */
  readonly bootstrapKeys: ReadonlyArray<{ name: string; key: string; scopes: Scope[] }>;
  /** Days of log partitions kept per source unless the source says otherwise. */
  readonly retentionDays: number;
  /** Load demo events on first start (default: only on the embedded database). */
  readonly loadDemoData: boolean;
  /** Cache warming: how often the warmer looks for due keys (cron expression, seconds field allowed). */
  readonly warmingTick: string;
  /** Multiplies every endpoint's warming period; tests shorten it. */
  readonly warmingScale: number;
  /** Requests per second per API key unless the key has its own (0: no limit). */
  readonly rateLimitPerSecond: number;
  /** Requests a quiet key may send at once. */
  readonly rateLimitBurst: number;
  /** Uncached queries running at once over all keys (and all processes sharing REDIS_URL): the database's slots. */
  readonly querySlots: number;
  /** Queries one key may have waiting for a slot (per process) before 429. */
  readonly queryQueueLimit: number;
  /** A hard cap on the uncached queries of one key running at once, queued above it (0: none, the key's fair share). */
  readonly maxConcurrentQueries: number;
  /** A hard budget: milliseconds of database query time one key gains per second (0: none). */
  readonly queryTimePerSecondMs: number;
  /** A hard budget: milliseconds of query time a key holds at most (0: none). */
  readonly queryTimeBurstMs: number;
  /** Alerts (docs/ALERTS.md): how often the scheduler looks for due alerts (node-cron, seconds field allowed). */
  readonly alertTick: string;
  /** The shortest time between two runs an alert's cron may ask for (the original: 5 minutes). */
  readonly alertMinIntervalSeconds: number;
  /**
   * Where alert deliveries may go: empty, any public address; else only the entries (host names,
   * IP addresses, CIDR ranges, `public`). Loopback and private ranges only when listed (SECURITY.md).
   */
  readonly alertWebhookHosts: readonly string[];
  /** Time limit of one delivery attempt. */
  readonly alertDeliveryTimeoutMs: number;
  /** Attempts of one delivery (the first and its retries) on 5xx, 429, a timeout or a dropped connection. */
  readonly alertDeliveryAttempts: number;
  /** The wait before the first retry; it doubles for each next one. */
  readonly alertRetryBackoffMs: number;
  /** How long a run's claim holds without news of its process before another process resumes the run. */
  readonly alertRunLeaseMs: number;
  readonly logLevel: string;
  /** How long a stop (SIGTERM/SIGINT) may take before the process exits 1 anyway. */
  readonly shutdownTimeoutMs: number;
  /** Time for a request's head to arrive (Node's headersTimeout); past it the connection is closed. */
  readonly headersTimeoutMs: number;
  /** Time for a whole request, body included, to arrive (Node's requestTimeout); past it 408 and the connection is closed. */
  readonly requestTimeoutMs: number;
  /** Lookups of keys that turn out unknown one client address may make per minute before 429 (src/auth/unknownKeys.ts); 0: no limit. */
  readonly unknownKeyLookupsPerMinute: number;
}

export type Scope = 'query' | 'ingest' | 'admin';

/** The original's data: its catalog (sources, endpoints, tokens) and its events (src/import/logflare/). */
export interface LogflareOrigin {
  readonly catalogUrl: string;
  readonly catalogSchema: string;
  readonly eventsUrl: string;
  readonly eventsSchema: string;
  /** Import it in the background at start (LOGFLARE_IMPORT_ON_START, default true). */
  readonly importOnStart: boolean;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  const originalUrl = originalDatabaseUrl(env);
  const databaseUrl = nonEmpty(env.DATABASE_URL) ?? originalUrl;
  if (databaseUrl !== undefined) requireDatabaseUrl(databaseUrl);
  const logflare = logflareOrigin(env, originalUrl ?? databaseUrl);
  const databaseSchema = schemaName(
    env,
    'DATABASE_SCHEMA',
    nonEmpty(env.DATABASE_URL) === undefined && originalUrl ? 'logquery' : 'public',
  );
  if (logflare && [logflare.catalogSchema, logflare.eventsSchema].includes(databaseSchema) && logflare.catalogUrl === databaseUrl)
    throw new ConfigError(
      `DATABASE_SCHEMA "${databaseSchema}" is the original service's schema (DB_SCHEMA, POSTGRES_BACKEND_SCHEMA): choose another, such as logquery`,
    );
  const redisUrl = nonEmpty(env.REDIS_URL);
  if (redisUrl !== undefined) requireUrl('REDIS_URL', redisUrl, ['redis:', 'rediss:']);

  const databaseReadUrls = (env.DATABASE_READ_URLS ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const u of databaseReadUrls) requireUrl('DATABASE_READ_URLS', u, ['postgres:', 'postgresql:']);
  const dbPoolSize = integer(env, 'DB_POOL_SIZE', 10, 1, 200);
  if (databaseReadUrls.length && databaseUrl === undefined)
    throw new ConfigError(
      'DATABASE_READ_URLS needs DATABASE_URL: replicas are standbys of a Postgres primary, not of the embedded database',
    );

  return {
    port: integer(env, 'PORT', 4000, 0, 65535),
    host: nonEmpty(env.HOST) ?? '0.0.0.0',
    databaseUrl,
    databaseSchema,
    logflare,
    dataDir: nonEmpty(env.DATA_DIR) ?? './data',
    databaseReadUrls,
    maxReplicaLagMs: integer(env, 'MAX_REPLICA_LAG_MS', 5000, 0, 3_600_000),
    replicaCheckIntervalMs: integer(env, 'REPLICA_CHECK_INTERVAL_MS', 1000, 50, 600_000),
    redisUrl,
    hourlySplit: boolean(env, 'HOURLY_SPLIT', true),
    hourlyWarmReports: boolean(env, 'HOURLY_WARM_REPORTS', true),
    cacheRedisTimeoutMs: integer(env, 'CACHE_REDIS_TIMEOUT_MS', 50, 1, 60_000),
    queryTimeoutMs: integer(env, 'QUERY_TIMEOUT_MS', 15000, 100, 3_600_000),
    dbPoolSize,
    dbConnectTimeoutMs: integer(env, 'DB_CONNECT_TIMEOUT_MS', 5000, 100, 120_000),
    bootstrapKeys: bootstrapKeys(env),
    retentionDays: integer(env, 'RETENTION_DAYS', 30, 1, 3650),
    loadDemoData: boolean(env, 'LOAD_DEMO_DATA', databaseUrl === undefined),
    warmingTick: nonEmpty(env.WARMING_TICK) ?? '*/5 * * * * *',
    warmingScale: number(env, 'WARMING_SCALE', 1, 0.0001, 1000),
    rateLimitPerSecond: integer(env, 'RATE_LIMIT_PER_SECOND', 100, 0, 1_000_000_000),
    rateLimitBurst: integer(env, 'RATE_LIMIT_BURST', 200, 0, 1_000_000_000),
    querySlots: integer(env, 'QUERY_SLOTS', defaultQuerySlots(dbPoolSize), 1, 10_000),
    queryQueueLimit: integer(env, 'QUERY_QUEUE_LIMIT', 64, 1, 1_000_000),
    maxConcurrentQueries: integer(env, 'MAX_CONCURRENT_QUERIES', 0, 0, 1_000_000),
    queryTimePerSecondMs: integer(env, 'QUERY_TIME_PER_SECOND_MS', 0, 0, 1_000_000_000),
    queryTimeBurstMs: integer(env, 'QUERY_TIME_BURST_MS', 0, 0, 1_000_000_000),
    alertTick: cronExpression(env, 'ALERT_TICK', '*/10 * * * * *'),
    alertMinIntervalSeconds: integer(env, 'ALERT_MIN_INTERVAL_SECONDS', 300, 1, 86_400),
    alertWebhookHosts: webhookHosts(env),
    alertDeliveryTimeoutMs: integer(env, 'ALERT_DELIVERY_TIMEOUT_MS', 10_000, 100, 120_000),
    alertDeliveryAttempts: integer(env, 'ALERT_DELIVERY_ATTEMPTS', 4, 1, 10),
    alertRetryBackoffMs: integer(env, 'ALERT_RETRY_BACKOFF_MS', 1000, 0, 600_000),
    alertRunLeaseMs: integer(env, 'ALERT_RUN_LEASE_MS', 60_000, 1000, 3_600_000),
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 100, 600_000),
    headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 60_000, 100, 3_600_000),
    unknownKeyLookupsPerMinute: integer(env, 'UNKNOWN_KEY_LOOKUPS_PER_MINUTE', 60, 0, 1_000_000),
  };
}

/**
 * QUERY_SLOTS unless set: what the pool and the cores can run without thrashing. Each running
 * query takes a core (and a parallel worker one more): twice the cores keeps them busy while
 * some queries wait on I/O, and the pool keeps connections for ingest and management. The
 * database's own cores are not visible from here; the stack of docker-compose.yml runs both on
 * one machine, and an operator with a bigger database host sets QUERY_SLOTS.
 */
function defaultQuerySlots(dbPoolSize: number): number {
  return Math.max(1, Math.min(dbPoolSize, 2 * availableParallelism()));
}

/**
 * The database URL from the variables the Supabase stack gives the original's container:
 * DB_HOSTNAME (required for this), DB_PORT (5432), DB_USERNAME (postgres), DB_PASSWORD,
 * DB_DATABASE (postgres); else its POSTGRES_BACKEND_URL. Undefined when none is set.
 */
function originalDatabaseUrl(env: Env): string | undefined {
  const host = nonEmpty(env.DB_HOSTNAME);
  if (host === undefined) return backendUrl(env);
  const port = integer(env, 'DB_PORT', 5432, 1, 65535);
  const user = encodeURIComponent(nonEmpty(env.DB_USERNAME) ?? 'postgres');
  const password = env.DB_PASSWORD ? `:${encodeURIComponent(env.DB_PASSWORD)}` : '';
  const database = encodeURIComponent(nonEmpty(env.DB_DATABASE) ?? 'postgres');
  return `postgres://${user}${password}@${host.includes(':') ? `[${host}]` : host}:${port}/${database}`;
}

/** POSTGRES_BACKEND_URL (the original's event store), checked; `ecto://` (its own scheme) read as `postgres://`. */
function backendUrl(env: Env): string | undefined {
  const raw = nonEmpty(env.POSTGRES_BACKEND_URL);
  if (raw === undefined) return undefined;
  const url = raw.replace(/^ecto:\/\//, 'postgres://');
  requireUrl('POSTGRES_BACKEND_URL', url, ['postgres:', 'postgresql:']);
  return url;
}

/**
 * Where the original's data is, when its variables name it: the catalog in DB_SCHEMA of the
 * database (public by default, as the original's), the events in POSTGRES_BACKEND_SCHEMA of
 * POSTGRES_BACKEND_URL (defaults: the catalog's).
 */
function logflareOrigin(env: Env, catalogUrl: string | undefined): LogflareOrigin | undefined {
  if (catalogUrl === undefined) return undefined;
  if (
    nonEmpty(env.DB_SCHEMA) === undefined &&
    nonEmpty(env.POSTGRES_BACKEND_SCHEMA) === undefined &&
    nonEmpty(env.POSTGRES_BACKEND_URL) === undefined
  )
    return undefined;
  const catalogSchema = schemaName(env, 'DB_SCHEMA', 'public');
  return {
    catalogUrl,
    catalogSchema,
    eventsUrl: backendUrl(env) ?? catalogUrl,
    eventsSchema: schemaName(env, 'POSTGRES_BACKEND_SCHEMA', catalogSchema),
    importOnStart: boolean(env, 'LOGFLARE_IMPORT_ON_START', true),
  };
}

function schemaName(env: Env, name: string, fallback: string): string {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/.test(raw) || raw === 'logs')
    throw new ConfigError(`${name} must be a schema name (letters, digits, _; not "logs", the log tables' schema), got "${raw}"`);
  return raw;
}

function bootstrapKeys(env: Env): Config['bootstrapKeys'] {
  const all: Scope[] = ['admin', 'query', 'ingest'];
  const specs: Array<[string, Scope[]]> = [
    ['ADMIN_API_KEY', all],
    ['QUERY_API_KEY', ['query']],
    ['INGEST_API_KEY', ['ingest']],
    ['LOGFLARE_PRIVATE_ACCESS_TOKEN', all],
    ['LOGFLARE_PUBLIC_ACCESS_TOKEN', ['ingest', 'query']],
    // The original service's older name of its public token: read only when that one is unset, as the original does.
    ...(nonEmpty(env.LOGFLARE_PUBLIC_ACCESS_TOKEN) === undefined
      ? ([['LOGFLARE_API_KEY', ['ingest', 'query']]] as Array<[string, Scope[]]>)
      : []),
  ];
  const keys: Array<{ name: string; key: string; scopes: Scope[] }> = [];
  for (const [name, scopes] of specs) {
    const key = nonEmpty(env[name]);
    if (key === undefined) continue;
    if (key.length < 16) throw new ConfigError(`${name} must be at least 16 characters long`);
    keys.push({ name: name.toLowerCase(), key, scopes });
  }
  return keys;
}

function cronExpression(env: Env, name: string, fallback: string): string {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!cron.validate(raw)) throw new ConfigError(`${name} must be a cron expression (node-cron, seconds field allowed), got "${raw}"`);
  return raw;
}

/** ALERT_WEBHOOK_HOSTS: comma-separated host names, IP addresses, CIDR ranges (`10.0.0.0/8`) or `public`. */
function webhookHosts(env: Env): string[] {
  const entries = (env.ALERT_WEBHOOK_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const ok =
      bits === undefined
        ? entry === 'public' || family !== 0 || /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(entry)
        : extra === undefined && family !== 0 && /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
    if (!ok)
      throw new ConfigError(`ALERT_WEBHOOK_HOSTS: "${entry}" is not a host name, an IP address, a CIDR range (10.0.0.0/8) or "public"`);
  }
  return entries;
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function number(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new ConfigError(`${name} must be a number from ${min} to ${max}, got "${raw}"`);
  return n;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** One host, or libpq's host list (`h1:5432,h2:5433`, src/db/databaseUrl.ts): each must make a URL. */
function requireDatabaseUrl(value: string): void {
  let urls: readonly string[];
  try {
    urls = splitDatabaseUrl(value).urls;
  } catch (err) {
    throw new ConfigError(`DATABASE_URL: ${(err as Error).message}`);
  }
  for (const url of urls) requireUrl('DATABASE_URL', url, ['postgres:', 'postgresql:']);
}

function requireUrl(name: string, value: string, protocols: string[]): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
}
