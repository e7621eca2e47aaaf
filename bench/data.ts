/**
 * Benchmark data: a dedicated database `lq_bench_<size>` holding the service's own tables
 * (migrations, the nine sources, seeded endpoints, via createContext) and generated log rows in
 * the stored shape, loaded with COPY.
 *
 * - `1m`: 1,000,000 rows over the last 8 days; `5m`: 5,000,000 rows over the last 40 days (the
 *   same events per day: "scaling means history", docs/ARCHITECTURE.md, "Measured facts
 *   behind the design").
 * - 85% edge events (`cloudflare.logs.prod`, ~1.6 KB of metadata each: varied paths, 20 skewed
 *   projects, mostly 2xx, some 4xx/5xx), 6% postgres logs (error_severity LOG … PANIC), the
 *   other seven sources share the rest.
 * - A few hundred events per source go through normaliseEvents + LogWriter first (so the
 *   source's inferred schema is merged exactly as ingest does it); the bulk is COPY of rows built
 *   from the stored shape of those same events (a normalised template with the varied values
 *   spliced in), in time order as a live stream would arrive. Then VACUUM ANALYZE.
 * - Reuse: a database that exists and whose `bench_meta` row says complete is reused. Rows
 *   between its newest timestamp and now are appended at the same density (so "last hour"
 *   windows are never empty); `--regen` drops and regenerates.
 */
import { randomUUID } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createContext, type AppContext } from '../src/context.js';
import { normaliseEvents } from '../src/ingest/normalise.js';
import { microsToIso } from '../src/ingest/timestamp.js';
import { createLogger } from '../src/logger.js';
import { ensurePartitions, listPartitions, qualifiedTable, quoteIdent } from '../src/storage/logTables.js';
import { checkPartition, saveBackfilledFacts } from '../src/storage/hotLeafFacts.js';
import { hotColumnName, hotValue, type HotLeaf } from '../src/storage/hotLeaves.js';
import { ADMIN_URL, databaseUrl, testConfig } from '../test/support/db.js';

const DAY_MS = 86_400_000;
export const ROWS_PER_DAY = 125_000;
export const SIZES = {
  '1m': { rows: 1_000_000, days: 8 },
  '5m': { rows: 5_000_000, days: 40 },
  '10m': { rows: 10_000_000, days: 7 },
} as const;
export type Size = keyof typeof SIZES;

/** Share of each source in the total. */
const SHARES: Record<string, number> = {
  'cloudflare.logs.prod': 0.85,
  'postgres.logs': 0.06,
  'deno-relay-logs': 0.0129,
  'deno-subhosting-events': 0.0129,
  'gotrue.logs.prod': 0.0129,
  'realtime.logs.prod': 0.0129,
  'storage.logs.prod.2': 0.0128,
  'postgREST.logs.prod': 0.0128,
  'pgbouncer.logs.prod': 0.0128,
};

export const PROJECTS = Array.from({ length: 20 }, (_, i) => `bench${String(i).padStart(2, '0')}${'abcdefghijklmno'.slice(0, 15)}`);
/** Zipf-like weights: project i has weight 1/(i+1); the first one has ~28% of the rows. */
const PROJECT_CUM = cumulative(PROJECTS.map((_, i) => 1 / (i + 1)));
/** The project the scenarios query (the biggest, so the heaviest dashboard). */
export const BENCH_PROJECT = PROJECTS[0];

const PATHS: Array<[string, number]> = [
  ['/rest/v1/todos', 20],
  ['/rest/v1/profiles', 12],
  ['/rest/v1/rpc/search', 8],
  ['/rest/v1/messages', 5],
  ['/storage/v1/object/public/avatars/a.png', 8],
  ['/storage/v1/object/sign/docs/report.pdf', 7],
  ['/auth/v1/token', 9],
  ['/auth/v1/user', 6],
  ['/realtime/v1/websocket', 10],
  ['/functions/v1/hello', 6],
  ['/graphql/v1', 4],
  ['/pg-meta/default/tables', 3],
  ['/', 2],
];
const PATH_CUM = cumulative(PATHS.map((p) => p[1]));
const STATUSES: Array<[number, number]> = [
  [200, 78],
  [201, 7],
  [204, 4],
  [304, 1],
  [400, 3],
  [401, 2.5],
  [404, 2.5],
  [500, 1.2],
  [502, 0.5],
  [503, 0.3],
];
const STATUS_CUM = cumulative(STATUSES.map((s) => s[1]));
const METHODS = ['GET', 'GET', 'GET', 'POST', 'POST', 'PATCH', 'DELETE', 'OPTIONS'];
const SEVERITIES: Array<[string, number]> = [
  ['LOG', 80],
  ['WARNING', 8],
  ['ERROR', 9],
  ['FATAL', 2],
  ['PANIC', 1],
];
const SEVERITY_CUM = cumulative(SEVERITIES.map((s) => s[1]));
const COUNTRIES = ['DE', 'US', 'GB', 'FR', 'IN', 'BR', 'JP', 'SG'];

function cumulative(weights: number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / total));
}
function pick(cum: number[], r: number): number {
  let i = 0;
  while (i < cum.length - 1 && r > cum[i]) i++;
  return i;
}

/** A small fast deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Values = Record<string, string | number>;

/** Varied values of one event of a source. */
export function valuesFor(source: string, r: () => number): Values {
  const project = PROJECTS[pick(PROJECT_CUM, r())];
  const hex = Math.floor(r() * 0xffffffff)
    .toString(16)
    .padStart(8, '0');
  const ip = `${1 + Math.floor(r() * 220)}.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}`;
  const v: Values = { PROJECT: project, HEX: hex, IP: ip };
  if (source === 'cloudflare.logs.prod') {
    const path = PATHS[pick(PATH_CUM, r())][0];
    v.METHOD = METHODS[Math.floor(r() * METHODS.length)]!;
    v.PATH = path;
    v.HOST = `${project}.supabase.co`;
    v.URL = `https://${project}.supabase.co${path}`;
    v.N_STATUS = STATUSES[pick(STATUS_CUM, r())][0];
    v.N_ORIGIN = Math.floor(r() * r() * 900);
    v.COUNTRY = COUNTRIES[Math.floor(r() * COUNTRIES.length)]!;
    v.N_ASN = 1000 + Math.floor(r() * 60000);
    v.N_LEN = Math.floor(r() * 90000);
  } else if (source === 'postgres.logs') {
    v.SEVERITY = SEVERITIES[pick(SEVERITY_CUM, r())][0];
    v.N_PID = 1000 + Math.floor(r() * 60000);
  }
  return v;
}

/** One event of a source with the given values (plain objects, as a shipper posts them). */
export function eventFor(source: string, v: Values): Record<string, unknown> {
  const s = (k: string) => String(v[k]);
  switch (source) {
    case 'cloudflare.logs.prod':
      return {
        event_message: `${s('METHOD')} | ${s('N_STATUS')} | ${s('IP')} | ${s('HEX')}6d4558de | ${s('URL')} | Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36`,
        project: s('PROJECT'),
        metadata: {
          logflare_worker: { worker_id: '0749QS' },
          request: {
            cf: {
              asOrganization: 'ACME Networks',
              asn: v.N_ASN,
              botManagement: {
                corporateProxy: false,
                ja3Hash: `1338b1a480d0ca1f3df004e7${s('HEX')}`,
                score: 98,
                staticResource: false,
                verifiedBot: false,
              },
              city: 'Berlin',
              clientAcceptEncoding: 'gzip, deflate, br',
              clientTrustScore: 98,
              colo: 'TXL',
              continent: 'EU',
              country: s('COUNTRY'),
              edgeRequestKeepAliveStatus: 1,
              httpProtocol: 'HTTP/2',
              isEUCountry: '1',
              latitude: '51.75670',
              longitude: '9.64260',
              postalCode: '25335',
              region: 'Holstein',
              regionCode: 'SH',
              timezone: 'Europe/Berlin',
              tlsCipher: 'AEAD-AES128-GCM-SHA256',
              tlsClientAuth: { certPresented: '0', certRevoked: '0', certVerified: 'NONE' },
              tlsVersion: 'TLSv1.3',
            },
            headers: {
              accept: 'application/json',
              cf_connecting_ip: s('IP'),
              cf_ipcountry: s('COUNTRY'),
              cf_ray: `${s('HEX')}123558de`,
              host: s('HOST'),
              referer: 'https://example-web.com/',
              user_agent:
                'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36',
              x_forwarded_proto: 'https',
              x_real_ip: s('IP'),
            },
            host: s('HOST'),
            method: s('METHOD'),
            path: s('PATH'),
            protocol: 'https:',
            search: '?select=*&limit=20',
            url: s('URL'),
          },
          response: {
            headers: {
              cf_cache_status: 'DYNAMIC',
              cf_ray: `${s('HEX')}06be58de-TXL`,
              content_length: s('N_LEN'),
              content_type: 'application/json',
              date: 'Sun, 22 Nov 2026 12:59:07 GMT',
              sb_gateway_mode: 'direct',
              sb_gateway_version: '1',
            },
            origin_time: v.N_ORIGIN,
            status_code: v.N_STATUS,
          },
        },
      };
    case 'postgres.logs':
      return {
        event_message: `${s('SEVERITY')}: statement ${s('HEX')} from ${s('IP')}`,
        project: s('PROJECT'),
        metadata: {
          host: `db-${s('PROJECT')}`,
          parsed: {
            backend_type: 'client backend',
            command_tag: 'SELECT',
            connection_from: `${s('IP')}:53482`,
            database_name: 'postgres',
            error_severity: s('SEVERITY'),
            leader_pid: 0,
            process_id: v.N_PID,
            query_id: 0,
            session_id: `641c59c7.${s('HEX')}`,
            session_line_num: 5215,
            session_start_time: '2026-11-20 13:53:11 UTC',
            sql_state_code: '01000',
            transaction_id: 0,
            user_name: 'authenticator',
            virtual_transaction_id: '10/9839543',
          },
        },
      };
    case 'deno-relay-logs':
      return {
        event_message: `GET | 200 | https://${s('PROJECT')}.functions.supabase.co/hello?x=${s('HEX')}`,
        metadata: {
          deployment_id: `${s('PROJECT')}_11`,
          execution_time_ms: 9,
          function_id: s('HEX'),
          project_ref: s('PROJECT'),
          request: {
            host: 'subhosting-v1.deno-aws.net',
            method: 'GET',
            pathname: '/hello',
            url: 'https://subhosting-v1.deno-aws.net/hello',
          },
          response: { status_code: 200 },
          version: '11',
        },
      };
    case 'deno-subhosting-events':
      return {
        event_message: `${s('HEX')} some text`,
        metadata: {
          deployment_id: `${s('PROJECT')}_773`,
          event_type: 'log',
          execution_id: s('HEX'),
          function_id: s('HEX'),
          level: 'info',
          project_ref: s('PROJECT'),
          region: 'aws-eu-central-1',
          version: '773',
        },
      };
    case 'gotrue.logs.prod':
      return {
        event_message: `{"level":"info","msg":"request started","path":"/user","remote_addr":"${s('IP')}"}`,
        project: s('PROJECT'),
        metadata: {
          component: 'api',
          host: `db-${s('PROJECT')}`,
          level: 'info',
          method: 'GET',
          msg: 'request started',
          path: '/user',
          remote_addr: s('IP'),
          request_id: s('HEX'),
          status: 200,
        },
      };
    case 'realtime.logs.prod':
      return {
        event_message: `Subscribed to PostgreSQL ${s('HEX')}`,
        metadata: {
          context: { application: 'realtime', file: 'lib/realtime_web/channels/realtime_channel.ex', line: 293, pid: '<0.5049.81>' },
          external_id: s('PROJECT'),
          level: 'info',
          project: s('PROJECT'),
        },
      };
    case 'storage.logs.prod.2':
      return {
        event_message: `content-type is text/plain ${s('HEX')}`,
        metadata: {
          context: { host: 'ip-10-105-2-212.eu-central-1.compute.internal', pid: 1 },
          level: 'info',
          project: s('PROJECT'),
          reqId: `${s('HEX')}-DUB`,
          tenantId: s('PROJECT'),
        },
      };
    case 'postgREST.logs.prod':
      return { event_message: `GET /todos ${s('HEX')}`, project: s('PROJECT'), metadata: { host: s('PROJECT') } };
    case 'pgbouncer.logs.prod':
      return {
        event_message: `S-0x${s('HEX')}: postgres/postgres@${s('IP')}:5432 new connection to server`,
        project: s('PROJECT'),
        metadata: { host: `db-${s('PROJECT')}` },
      };
    default:
      throw new Error(`no generator for ${source}`);
  }
}

/** COPY text-format escaping. */
function copyEscape(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
}

/**
 * A row builder for one source: an event with `@@KEY@@` sentinel values is normalised once into
 * the stored shape, printed as a COPY line, and split at the sentinels; each row then only splices
 * its values in (the values are plain ASCII without quotes, backslashes or tabs).
 */
function rowBuilder(source: string, hot: readonly HotLeaf[]): (id: string, micros: bigint, v: Values) => string {
  const keys = Object.keys(valuesFor(source, rng(1)));
  const sentinels: Values = Object.fromEntries(keys.map((k) => [k, `@@${k}@@`]));
  const [row] = normaliseEvents([eventFor(source, sentinels)], { nowMs: Date.now(), retentionDays: 1 }).rows;
  // Hot columns as the writer fills them: a leaf that is a sentinel is spliced like the JSON's.
  const hotText = hot.map((leaf) => {
    const sentinel = hotValue(row.metadata, { ...leaf, type: 'STRING' });
    if (typeof sentinel === 'string' && /^@@\w+@@$/.test(sentinel)) return sentinel;
    const v = hotValue(row.metadata, leaf);
    return v === null ? '\\N' : copyEscape(String(v));
  });
  const line =
    [
      '@@ID@@',
      '@@TS@@',
      row.event_message === null ? '\\N' : copyEscape(row.event_message),
      row.project === null ? '\\N' : copyEscape(row.project),
      row.metadata === null ? '\\N' : copyEscape(JSON.stringify(row.metadata)),
      row.body === null ? '\\N' : copyEscape(JSON.stringify(row.body)),
      ...hotText,
    ].join('\t') + '\n';
  const parts = line.replace(/"@@(N_\w+)@@"/g, '@@$1@@').split(/@@(\w+)@@/);
  return (id, micros, v) => {
    let out = parts[0];
    for (let i = 1; i < parts.length; i += 2) {
      const key = parts[i];
      out += (key === 'ID' ? id : key === 'TS' ? microsToIso(micros) : String(v[key])) + parts[i + 1];
    }
    return out;
  };
}

export interface BenchDatabase {
  name: string;
  url: string;
  size: string;
  rows: number;
  /** Wall seconds spent creating or topping up the data in this run. */
  seconds: number;
  reused: boolean;
  edgeBytesPerRow: number;
}

async function adminQuery<T extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return (await c.query<T>(sql, values)).rows;
  } finally {
    await c.end();
  }
}

/** The service configuration for a bench database (retention long enough for 40 days of data). */
export function benchEnv(): Record<string, string> {
  // No request rate: each scenario drives one key flat out (bench/fairness.ts measures the scheduler with the defaults).
  return {
    RETENTION_DAYS: '120',
    DB_POOL_SIZE: '10',
    RATE_LIMIT_PER_SECOND: '0',
    MAX_CONCURRENT_QUERIES: '0',
    QUERY_TIME_PER_SECOND_MS: '0',
  };
}

/** Creates (or reuses and tops up) `lq_bench_<size>`. */
export function ensureBenchData(size: Size, options: { regen?: boolean; log?: (line: string) => void } = {}): Promise<BenchDatabase> {
  return ensureData({ name: `lq_bench_${size}`, label: size, ...SIZES[size] }, options);
}

/**
 * What to generate: `rows` over the last `days` (so rows / days events per day) into database
 * `name`; `label` keys its bench_meta row. bench/scaling.ts uses other sizes and rates.
 */
export interface DataSpec {
  name: string;
  label: string;
  rows: number;
  days: number;
}

/** Creates (or reuses and tops up) the database of `spec`. */
export async function ensureData(spec: DataSpec, options: { regen?: boolean; log?: (line: string) => void } = {}): Promise<BenchDatabase> {
  const log = options.log ?? ((l: string) => console.log(l));
  const { name, label: size } = spec;
  const url = databaseUrl(ADMIN_URL, name);
  const started = Date.now();
  const exists = (await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [name])).length > 0;
  let meta: { complete: boolean; until_ms: string; rows: string } | undefined;
  if (exists && !options.regen) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      meta = (await c.query('SELECT complete, until_ms, rows FROM bench_meta WHERE size = $1', [size]).catch(() => ({ rows: [] }))).rows[0];
    } finally {
      await c.end();
    }
  }
  if (exists && !meta?.complete) {
    log(`${name}: ${options.regen ? '--regen' : 'incomplete'}; dropping it`);
    await adminQuery(`DROP DATABASE "${name}" WITH (FORCE)`);
  }
  if (!meta?.complete) await adminQuery(`CREATE DATABASE "${name}"`);

  const ctx = await createContext(testConfig(url, benchEnv()), createLogger('silent'));
  try {
    const nowMs = Date.now();
    let edgeBytes = 0;
    if (meta?.complete) {
      const fromMs = Number(meta.until_ms);
      const gapRows = Math.floor(((nowMs - fromMs) / DAY_MS) * (spec.rows / spec.days));
      if (gapRows > 100) {
        log(`${name}: reusing; topping up ${gapRows} rows since ${new Date(fromMs).toISOString()}`);
        await load(ctx, fromMs, nowMs, gapRows, nowMs, false, log);
        await ctx.db.pool.query('UPDATE bench_meta SET until_ms = $2, rows = rows + $3 WHERE size = $1', [size, nowMs, gapRows]);
        await analyze(ctx, false);
      } else log(`${name}: reusing`);
    } else {
      const { rows, days } = spec;
      log(`${name}: generating ${rows.toLocaleString('en')} rows over ${days} days (COPY)`);
      await ctx.db.pool.query(
        'CREATE TABLE bench_meta (size text PRIMARY KEY, complete boolean NOT NULL, until_ms bigint NOT NULL, rows bigint NOT NULL)',
      );
      const fromMs = nowMs - days * DAY_MS;
      edgeBytes = await load(ctx, fromMs, nowMs, rows, nowMs, true, log);
      log(`${name}: VACUUM ANALYZE`);
      await analyze(ctx, true);
      await ctx.db.pool.query('INSERT INTO bench_meta VALUES ($1, true, $2, $3)', [size, nowMs, rows]);
    }
    const [row] = (await ctx.db.pool.query('SELECT rows FROM bench_meta WHERE size = $1', [size])).rows;
    if (!edgeBytes) {
      const source = await ctx.sources.get('cloudflare.logs.prod');
      const [s] = (
        await ctx.db.pool.query(
          `SELECT avg(length(metadata::text) + length(event_message) + 80)::int AS b FROM (SELECT * FROM ${qualifiedTable(source.table_name)} LIMIT 1000) t`,
        )
      ).rows;
      edgeBytes = s.b;
    }
    return {
      name,
      url,
      size,
      rows: Number(row.rows),
      seconds: (Date.now() - started) / 1000,
      reused: Boolean(meta?.complete),
      edgeBytesPerRow: edgeBytes,
    };
  } finally {
    await ctx.close();
  }
}

async function analyze(ctx: AppContext, vacuum: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: ctx.db.url });
  await client.connect();
  try {
    for (const source of ctx.sources.list()) {
      await client.query(`${vacuum ? 'VACUUM (ANALYZE)' : 'ANALYZE'} ${qualifiedTable(source.table_name)}`);
    }
  } finally {
    await client.end();
  }
}

/**
 * Loads `total` rows spread over [fromMs, toMs) in time order: first a sample per source through
 * normaliseEvents + LogWriter (schema merged as ingest does), then the rest by COPY, two streams
 * at a time (the edge rows split in two time halves). Returns the mean stored size of an edge row.
 */
async function load(
  ctx: AppContext,
  fromMs: number,
  toMs: number,
  total: number,
  nowMs: number,
  sample: boolean,
  log: (l: string) => void,
): Promise<number> {
  const jobs: Array<{ source: string; table: string; hot: readonly HotLeaf[]; from: number; to: number; count: number; seed: number }> = [];
  let seed = Math.floor(fromMs / 1000);
  let edgeBytes = 0;
  for (const [sourceName, share] of Object.entries(SHARES)) {
    const source = await ctx.sources.get(sourceName);
    await ensurePartitions(ctx.db.pool, source.table_name, fromMs, toMs + 2 * DAY_MS);
    let count = Math.round(total * share);
    if (sample) {
      const n = Math.min(300, count);
      const r = rng(seed++);
      const events = Array.from({ length: n }, (_, i) => ({
        ...eventFor(sourceName, valuesFor(sourceName, r)),
        id: randomUUID(),
        timestamp: (fromMs + ((i + 0.5) / n) * (toMs - fromMs)) * 1000,
      }));
      const batch = normaliseEvents(events, { nowMs, retentionDays: source.retention_days });
      if (batch.errors.length) throw new Error(`sample events of ${sourceName} are invalid: ${JSON.stringify(batch.errors[0])}`);
      await ctx.writer.write(source, batch.rows, batch.fields);
      count -= n;
    }
    const halves = sourceName === 'cloudflare.logs.prod' ? 2 : 1;
    for (let h = 0; h < halves; h++) {
      const span = (toMs - fromMs) / halves;
      jobs.push({
        source: sourceName,
        table: source.table_name,
        hot: source.hot_leaves ?? [],
        from: fromMs + h * span,
        to: fromMs + (h + 1) * span,
        count: Math.round(count / halves),
        seed: seed++,
      });
    }
  }
  const started = Date.now();
  let done = 0;
  const run = async (job: (typeof jobs)[number]) => {
    const build = rowBuilder(job.source, job.hot);
    const r = rng(job.seed);
    const stepMicros = ((job.to - job.from) * 1000) / Math.max(1, job.count);
    const startMicros = job.from * 1000;
    async function* chunks() {
      const CHUNK = 2000;
      for (let i = 0; i < job.count; i += CHUNK) {
        let text = '';
        const end = Math.min(job.count, i + CHUNK);
        for (let k = i; k < end; k++) {
          const micros = BigInt(Math.floor(startMicros + (k + r()) * stepMicros));
          text += build(randomUUID(), micros, valuesFor(job.source, r));
        }
        if (job.source === 'cloudflare.logs.prod' && !edgeBytes) edgeBytes = Math.round(text.length / (end - i));
        done += end - i;
        yield text;
      }
    }
    // Its own connection: the service pool's clients have a query time limit, and a COPY of
    // half a million rows runs for minutes.
    const client = new pg.Client({ connectionString: ctx.db.url });
    await client.connect();
    try {
      const stream = client.query(
        copyFrom(
          `COPY ${qualifiedTable(job.table)} (id, "timestamp", event_message, project, metadata, body${job.hot.map((l) => ', ' + quoteIdent(hotColumnName(l.path))).join('')}) FROM STDIN`,
        ),
      );
      await pipeline(Readable.from(chunks()), stream);
    } finally {
      await client.end();
    }
  };
  const progress = setInterval(() => log(`  ${done.toLocaleString('en')} rows (${((Date.now() - started) / 1000).toFixed(0)} s)`), 15_000);
  try {
    let next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        for (let j = next++; j < jobs.length; j = next++) await run(jobs[j]);
      }),
    );
  } finally {
    clearInterval(progress);
  }
  log(`  loaded ${done.toLocaleString('en')} rows by COPY in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  // The COPY went around the writer, which notes what rows show about hot leaves
  // (src/storage/hotLeafFacts.ts): the backfill's check does it instead, so the facts are true.
  for (const table of new Set(jobs.filter((j) => j.hot.length).map((j) => j.table))) {
    const hot = jobs.find((j) => j.table === table)!.hot;
    for (const p of await listPartitions(ctx.db.pool, table))
      await saveBackfilledFacts(ctx.db.pool, table, await checkPartition(ctx.db.pool, p.name, hot), []);
  }
  return edgeBytes;
}

// `npx tsx bench/data.ts [1m|5m|10m] [--regen]`: only the data.
if (import.meta.url === `file://${process.argv[1]}`) {
  const size = (process.argv.find((a) => a in SIZES) ?? '1m') as Size;
  const db = await ensureBenchData(size, { regen: process.argv.includes('--regen') });
  console.log(JSON.stringify(db));
}
