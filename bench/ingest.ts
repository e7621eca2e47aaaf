/**
 * Ingest throughput: the app in-process on a fresh database, `POST /api/logs` of 1,000-event
 * batches of edge events over HTTP by a few concurrent clients, against the floor of raw `COPY`
 * of the same rows into the same table with the same batch size and concurrency. Also the
 * in-process path without HTTP (normalise + LogWriter), to show where the time goes, and
 * `POST /v1/logs` of the same events as OTLP protobuf log records (otlpBodies).
 * Writes BENCHMARKS.md's "Ingestion" section.
 *
 *   npx tsx bench/ingest.ts [--batches 30] [--clients 3] [--batch-size 1000] [--rounds 3] [--no-write] [--only http,direct,copy,otlp]
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { from as copyFrom } from 'pg-copy-streams';
import type pg from 'pg';
import { createHttpServer } from '../src/http/server.js';
import { createApp } from '../src/app.js';
import { generateKey } from '../src/auth/keys.js';
import { createContext } from '../src/context.js';
import { normaliseEvents } from '../src/ingest/normalise.js';
import { createLogger } from '../src/logger.js';
import { qualifiedTable, quoteIdent } from '../src/storage/logTables.js';
import { copyChunks } from '../src/ingest/write.js';
import { hotColumnName } from '../src/storage/hotLeaves.js';
import { FactsObserver } from '../src/storage/hotLeafFacts.js';
import { createEmptyDatabase, dropDatabase, testConfig } from '../test/support/db.js';

const { values: opts } = parseArgs({
  options: {
    batches: { type: 'string', default: '30' },
    clients: { type: 'string', default: '3' },
    'batch-size': { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    'no-write': { type: 'boolean', default: false },
    /** Run only these paths (comma-separated: http,direct,copy), e.g. to profile one. */
    only: { type: 'string', default: 'http,direct,copy,otlp' },
  },
});
const BATCHES = Number(opts.batches);
const CLIENTS = Number(opts.clients);
const BATCH_SIZE = Number(opts['batch-size']);
/** Each round runs the three paths in a different order; the best round of each path counts (the machine is shared and noisy). */
const ROUNDS = Number(opts.rounds);
const SOURCE = 'cloudflare.logs.prod';
const utf8 = new TextEncoder();
// A full collection before each timed phase, so garbage of the (untimed) data generation is not
// collected inside a timed phase and charged to whichever path runs next.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;
const FIXTURE = new URL('../seeds/fixtures/cloudflare.logs.prod.json', import.meta.url);

/** Edge events from the fixture, each with its own id, a distinct µs timestamp in the last hour, and a few varied fields. */
function edgeEvents(count: number, project: string): Record<string, unknown>[] {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a free-form sample event whose nested fields are rewritten
  const template = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, any>;
  const nowMicros = Date.now() * 1000;
  const methods = ['GET', 'POST', 'PATCH', 'DELETE'];
  const paths = ['/rest/v1/some_table', '/storage/v1/object/bucket/img.png', '/auth/v1/token', '/realtime/v1/websocket'];
  const statuses = [200, 201, 204, 400, 401, 404, 500];
  return Array.from({ length: count }, (_, i) => {
    const e = structuredClone(template);
    e.id = randomUUID();
    e.timestamp = nowMicros - Math.floor(Math.random() * 3_600_000_000); // unix µs
    e.project = project;
    e.metadata.request.method = methods[i % methods.length];
    e.metadata.request.path = paths[i % paths.length];
    e.metadata.request.url = `https://${project}.supabase.co${paths[i % paths.length]}`;
    e.metadata.response.status_code = statuses[i % statuses.length];
    e.metadata.response.origin_time = Math.floor(Math.random() * 500);
    return e;
  });
}

/** Runs `work(i)` for i in 0..n-1 with `clients` workers; elapsed seconds and this process's CPU seconds. */
async function timed(n: number, clients: number, work: (i: number) => Promise<void>): Promise<{ seconds: number; cpu: number }> {
  let next = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < n; i = next++) await work(i);
    }),
  );
  const cpu = process.cpuUsage(cpuStart);
  return { seconds: (performance.now() - start) / 1000, cpu: (cpu.user + cpu.system) / 1e6 };
}

/**
 * CPU seconds used so far by this database's Postgres backends (local server only: read from
 * /proc; undefined when it cannot be read). With the process's own CPU, this gives a cost per
 * event that does not depend on what else the machine is doing, unlike events/s.
 */
async function backendCpuSeconds(pool: pg.Pool): Promise<number | undefined> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
  let ticks = 0;
  try {
    for (const { pid } of rows) {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    }
  } catch {
    return undefined;
  }
  return ticks / 100; // USER_HZ
}

/**
 * The HTTP clients run in a worker thread: in production they are other machines, so their
 * work (encoding, sending, reading answers) must not share the service's event loop.
 */
const CLIENT_WORKER = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', async ({ url, key, bodies, clients, contentType }) => {
  try {
    let next = 0;
    const start = performance.now();
    await Promise.all(Array.from({ length: clients }, async () => {
      for (let i = next++; i < bodies.length; i = next++) {
        const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': contentType, 'X-API-KEY': key }, body: bodies[i] });
        const text = await res.text();
        if (res.status !== 200) throw new Error('ingest answered ' + res.status + ': ' + text.slice(0, 300));
      }
    }));
    parentPort.postMessage({ seconds: (performance.now() - start) / 1000 });
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message || err) });
  }
});
`;

function postInWorker(
  worker: Worker,
  url: string,
  key: string,
  bodies: Uint8Array<ArrayBuffer>[],
  clients: number,
  contentType = 'application/json',
): Promise<number> {
  return new Promise((resolve, reject) => {
    worker.once('message', (m: { seconds?: number; error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m.seconds!)));
    worker.postMessage(
      { url, key, bodies, clients, contentType },
      bodies.map((b) => b.buffer),
    );
  });
}

type OtlpMessage = Record<string, unknown>;
const ExportLogsServiceRequest = (
  createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
    opentelemetry: {
      proto: {
        collector: {
          logs: {
            v1: { ExportLogsServiceRequest: { fromObject(o: OtlpMessage): OtlpMessage; encode(m: OtlpMessage): { finish(): Uint8Array } } };
          };
        };
      };
    };
  }
).opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

/** A JSON value as an OTLP AnyValue. */
function anyValue(v: unknown): OtlpMessage {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: v } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  if (v && typeof v === 'object')
    return { kvlistValue: { values: Object.entries(v).map(([key, value]) => ({ key, value: anyValue(value) })) } };
  return {};
}

/**
 * The same edge events as one protobuf ExportLogsServiceRequest: each a log record with the
 * event message as body and its metadata as attributes, under one resource (service.name
 * `bench-otlp`), as an OpenTelemetry SDK would send them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the sample events above
function otlpBody(events: Record<string, any>[]): Uint8Array<ArrayBuffer> {
  const logRecords = events.map((e) => ({
    timeUnixNano: String(BigInt(e.timestamp) * 1000n),
    severityNumber: 9,
    severityText: 'INFO',
    body: { stringValue: e.event_message },
    attributes: Object.entries(e.metadata as Record<string, unknown>).map(([key, value]) => ({ key, value: anyValue(value) })),
  }));
  const message = ExportLogsServiceRequest.fromObject({
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'bench-otlp' } }] },
        scopeLogs: [{ scope: { name: 'bench' }, logRecords }],
      },
    ],
  });
  return new Uint8Array(ExportLogsServiceRequest.encode(message).finish());
}

async function main(): Promise<void> {
  const { url, name } = await createEmptyDatabase('lq_bench');
  const ctx = await createContext(testConfig(url, { DB_POOL_SIZE: '10' }), createLogger('silent'));
  let server: Server | undefined;
  let clients: Worker | undefined;
  try {
    const app = await createApp(ctx);
    const key = generateKey();
    await ctx.keys.create('bench', key, ['ingest']);
    server = await new Promise<Server>((resolve) => {
      const s = createHttpServer(app).listen(0, '127.0.0.1', () => resolve(s));
    });
    const { port } = server.address() as AddressInfo;
    const source = await ctx.sources.get(SOURCE);
    const total = BATCHES * BATCH_SIZE;

    // Bodies are built before timing (the figure is the service's, not the client's), fresh ids for each round.
    const httpBodies = () =>
      Array.from({ length: BATCHES }, () => utf8.encode(JSON.stringify({ batch: edgeEvents(BATCH_SIZE, 'bench-http') })));
    const directBatches = () => Array.from({ length: BATCHES }, () => edgeEvents(BATCH_SIZE, 'bench-direct'));
    const hotLeaves = source.hot_leaves ?? [];
    const copyBodies = () =>
      Array.from({ length: BATCHES }, () => {
        const batch = normaliseEvents(edgeEvents(BATCH_SIZE, 'bench-copy'), { nowMs: Date.now(), retentionDays: 30 });
        // The writer's own COPY text, hot columns included (built before timing, like the bodies).
        return Buffer.concat(copyChunks(batch.rows, hotLeaves.length ? new FactsObserver(hotLeaves, source.table_name) : undefined));
      });
    const otlpBodies = () => Array.from({ length: BATCHES }, () => otlpBody(edgeEvents(BATCH_SIZE, 'bench-otlp')));
    const sample = httpBodies();
    const bodyBytes = sample.reduce((n, b) => n + b.length, 0);

    // Warm-up: one batch through each path (JIT, partitions, connections), not counted.
    const warm = utf8.encode(JSON.stringify({ batch: edgeEvents(BATCH_SIZE, 'bench-warm') }));
    const post = async (body: Uint8Array<ArrayBuffer>) => {
      const res = await fetch(`http://127.0.0.1:${port}/api/logs?source_name=${SOURCE}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-KEY': key },
        body,
      });
      if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    await post(warm);
    clients = new Worker(CLIENT_WORKER, { eval: true });
    const copy = async (text: Buffer) => {
      const client = await ctx.db.pool.connect();
      try {
        const stream = client.query(
          copyFrom(
            `COPY ${qualifiedTable(source.table_name)} (id, "timestamp", event_message, project, metadata, body${hotLeaves.map((l) => ', ' + quoteIdent(hotColumnName(l.path))).join('')}) FROM STDIN`,
          ),
        );
        await pipeline(Readable.from([text]), stream);
      } finally {
        client.release();
      }
    };
    await copy(copyBodies()[0]);

    const paths = {
      http: async () => {
        const bodies = httpBodies();
        collectGarbage();
        const cpuStart = process.cpuUsage();
        const seconds = await postInWorker(clients!, `http://127.0.0.1:${port}/api/logs?source_name=${SOURCE}`, key, bodies, CLIENTS);
        const cpu = process.cpuUsage(cpuStart);
        return { seconds, cpu: (cpu.user + cpu.system) / 1e6 };
      },
      direct: async () => {
        const batches = directBatches();
        collectGarbage();
        return timed(BATCHES, CLIENTS, async (i) => {
          const batch = normaliseEvents(batches[i], { nowMs: Date.now(), retentionDays: source.retention_days });
          await ctx.writer.write(source, batch.rows, batch.fields);
        });
      },
      copy: async () => {
        const bodies = copyBodies();
        collectGarbage();
        return timed(BATCHES, CLIENTS, (i) => copy(bodies[i]));
      },
      otlp: async () => {
        const bodies = otlpBodies();
        collectGarbage();
        const cpuStart = process.cpuUsage();
        const seconds = await postInWorker(
          clients!,
          `http://127.0.0.1:${port}/v1/logs?source_name=${SOURCE}`,
          key,
          bodies,
          CLIENTS,
          'application/x-protobuf',
        );
        const cpu = process.cpuUsage(cpuStart);
        return { seconds, cpu: (cpu.user + cpu.system) / 1e6 };
      },
    };
    const loadAtStart = os.loadavg()[0].toFixed(1);
    const best = { http: Infinity, direct: Infinity, copy: Infinity, otlp: Infinity };
    const cpuOfBest = { http: 0, direct: 0, copy: 0, otlp: 0 };
    /** Node + Postgres CPU ms per 1,000 events, per round. */
    const cpuPerThousand: Record<keyof typeof paths, number[]> = { http: [], direct: [], copy: [], otlp: [] };
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
    const orders: Array<Array<keyof typeof paths>> = [
      ['copy', 'http', 'direct', 'otlp'],
      ['http', 'otlp', 'direct', 'copy'],
      ['direct', 'copy', 'otlp', 'http'],
    ];
    for (let round = 0; round < ROUNDS; round++) {
      const times: string[] = [];
      for (const path of orders[round % orders.length].filter((p) => opts.only.split(',').includes(p))) {
        const pgBefore = await backendCpuSeconds(ctx.db.pool);
        const { seconds, cpu } = await paths[path]();
        const pgAfter = await backendCpuSeconds(ctx.db.pool);
        const pgCpu = pgBefore === undefined || pgAfter === undefined ? NaN : pgAfter - pgBefore;
        if (seconds < best[path]) {
          best[path] = seconds;
          cpuOfBest[path] = cpu;
        }
        cpuPerThousand[path].push(((cpu + pgCpu) / total) * 1e6);
        times.push(`${path} ${(total / seconds).toFixed(0)}/s (node cpu ${cpu.toFixed(2)} s, postgres cpu ${pgCpu.toFixed(2)} s)`);
      }
      console.log(`round ${round + 1}: ${times.join(', ')}`);
    }
    const httpSeconds = best.http,
      directSeconds = best.direct,
      copySeconds = best.copy,
      otlpSeconds = best.otlp;

    const { rows } = await ctx.db.pool.query(
      `SELECT project, count(*)::int AS n FROM ${qualifiedTable(source.table_name)} GROUP BY 1 ORDER BY 1`,
    );
    const counts = Object.fromEntries(rows.map((r) => [r.project, r.n]));
    for (const path of ['http', 'direct'] as const) {
      if (opts.only.includes(path) && counts[`bench-${path}`] !== total * ROUNDS)
        throw new Error(`row counts are off: ${JSON.stringify(counts)}`);
    }
    if (opts.only.includes('otlp')) {
      const {
        rows: [otlpRows],
      } = await ctx.db.pool.query(
        `SELECT count(*)::int AS n FROM ${qualifiedTable(source.table_name)} WHERE metadata->0->'resource'->0->>'service_name' = 'bench-otlp'`,
      );
      if (otlpRows.n !== total * ROUNDS) throw new Error(`OTLP row count is off: ${otlpRows.n}`);
    }

    const httpRate = total / httpSeconds;
    const directRate = total / directSeconds;
    const copyRate = total / copySeconds;
    const ratio = httpRate / copyRate;
    const otlpRate = total / otlpSeconds;
    const figures = {
      date: new Date().toISOString().slice(0, 10),
      node: process.version,
      batches: BATCHES,
      batchSize: BATCH_SIZE,
      clients: CLIENTS,
      rounds: ROUNDS,
      load: `${loadAtStart} → ${os.loadavg()[0].toFixed(1)}`,
      mbPerBatch: bodyBytes / BATCHES / 1e6,
      httpRate,
      directRate,
      copyRate,
      ratio,
      otlpRate,
      cpu: {
        http: median(cpuPerThousand.http),
        direct: median(cpuPerThousand.direct),
        copy: median(cpuPerThousand.copy),
        otlp: median(cpuPerThousand.otlp),
      },
    };
    console.log(
      `HTTP POST /api/logs      ${httpRate.toFixed(0).padStart(8)} events/s  (${(httpSeconds * 1000).toFixed(0)} ms, process CPU ${cpuOfBest.http.toFixed(2)} s incl. the client thread, ${figures.mbPerBatch.toFixed(2)} MB per batch)`,
    );
    console.log(`in-process normalise+write ${directRate.toFixed(0).padStart(6)} events/s  (${(directSeconds * 1000).toFixed(0)} ms)`);
    console.log(`raw COPY (floor)         ${copyRate.toFixed(0).padStart(8)} events/s  (${(copySeconds * 1000).toFixed(0)} ms)`);
    console.log(`OTLP POST /v1/logs (protobuf) ${otlpRate.toFixed(0).padStart(6)} events/s  (${(otlpSeconds * 1000).toFixed(0)} ms)`);
    console.log(
      `ratio HTTP / COPY        ${ratio.toFixed(2)}  (target >= 0.5); OTLP / COPY ${(otlpRate / copyRate).toFixed(2)}; load average ${figures.load}`,
    );
    console.log(
      `CPU ms per 1,000 events (Node + Postgres, median of rounds): HTTP ${figures.cpu.http.toFixed(0)}, OTLP ${figures.cpu.otlp.toFixed(0)}, in-process ${figures.cpu.direct.toFixed(0)}, COPY ${figures.cpu.copy.toFixed(0)}; COPY / HTTP ${(figures.cpu.copy / figures.cpu.http).toFixed(2)}`,
    );
    if (!opts['no-write']) writeSection(figures);
  } finally {
    await clients?.terminate();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await ctx.close();
    await dropDatabase(name);
  }
}

interface Figures {
  date: string;
  node: string;
  batches: number;
  batchSize: number;
  clients: number;
  rounds: number;
  load: string;
  mbPerBatch: number;
  httpRate: number;
  directRate: number;
  copyRate: number;
  ratio: number;
  otlpRate: number;
  cpu: { http: number; direct: number; copy: number; otlp: number };
}

const START = '<!-- ingest-bench:start -->';
const END = '<!-- ingest-bench:end -->';

/** Replaces the latest-run table of the "Ingestion" section; the rest of the section (notes, history) is kept. */
function writeSection(f: Figures): void {
  const file = new URL('../BENCHMARKS.md', import.meta.url);
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const table = [
    START,
    `Latest run: ${f.date}, Node ${f.node}, ${f.batches} batches of ${f.batchSize} edge events (${f.mbPerBatch.toFixed(2)} MB of JSON each), ${f.clients} concurrent clients, local Postgres on the same ${os.cpus().length} cores (1-minute load average ${f.load} during the run); best of ${f.rounds} rounds, each running the four paths in a different order.`,
    '',
    '| path | events/s | CPU ms per 1,000 events (Node + Postgres) |',
    '|---|---:|---:|',
    `| \`POST /api/logs\` over HTTP (parse, normalise, one-transaction COPY) | ${f.httpRate.toFixed(0)} | ${f.cpu.http.toFixed(0)} |`,
    `| \`POST /v1/logs\` over HTTP, the same events as OTLP protobuf log records (decode, map, normalise, COPY) | ${f.otlpRate.toFixed(0)} | ${f.cpu.otlp.toFixed(0)} |`,
    `| in-process \`normaliseEvents\` + \`LogWriter.write\` (no HTTP, no JSON parse) | ${f.directRate.toFixed(0)} | ${f.cpu.direct.toFixed(0)} |`,
    `| raw \`COPY ... FROM STDIN\` of the same stored rows (floor) | ${f.copyRate.toFixed(0)} | ${f.cpu.copy.toFixed(0)} |`,
    `| **ratio HTTP / COPY** (target ≥ 0.5) | **${f.ratio.toFixed(2)}** | **${(f.cpu.copy / f.cpu.http).toFixed(2)}** (COPY cost / HTTP cost) |`,
    `| ratio OTLP / COPY | ${(f.otlpRate / f.copyRate).toFixed(2)} | ${(f.cpu.copy / f.cpu.otlp).toFixed(2)} |`,
    END,
  ].join('\n');
  if (!/^## Ingestion$/m.test(text)) {
    text = text.trimEnd() + `\n\n## Ingestion\n\n\`npx tsx bench/ingest.ts\`\n\n${table}\n`;
  } else if (text.includes(START) && text.includes(END)) {
    text = text.slice(0, text.indexOf(START)) + table + text.slice(text.indexOf(END) + END.length);
  } else {
    text = text.replace(/^## Ingestion\n/m, `## Ingestion\n\n${table}\n`);
  }
  writeFileSync(file, text);
}

await main();
