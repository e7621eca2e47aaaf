/**
 * The insert statement alone: one batch of 1,000 stored edge rows written by each candidate
 * statement, one at a time on one connection, median ms per batch over several rounds (the
 * variants take turns, so table growth and noise hit all alike), with the Node and Postgres
 * CPU each used. Prints only; the choice and its figures are recorded in src/ingest/write.ts
 * and BENCHMARKS.md (Ingestion). The writer's own COPY (`copyRows`, in use on Postgres) and
 * INSERT (`insertRows`, in use on the embedded PGlite) are two of the variants.
 *
 *   npx tsx bench/ingest-insert.ts
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createContext } from '../src/context.js';
import { normaliseEvents, type LogRow } from '../src/ingest/normalise.js';
import { microsToIso } from '../src/ingest/timestamp.js';
import { copyRows, insertRows } from '../src/ingest/write.js';
import { createLogger } from '../src/logger.js';
import { createEmptyDatabase, dropDatabase, testConfig } from '../test/support/db.js';

const ROUNDS = 9;
const template = JSON.parse(readFileSync(new URL('../seeds/fixtures/cloudflare.logs.prod.json', import.meta.url), 'utf8'));
const batch = (): LogRow[] =>
  normaliseEvents(
    Array.from({ length: 1000 }, () => ({ ...structuredClone(template), id: randomUUID(), timestamp: Date.now() * 1000 })),
    { nowMs: Date.now(), retentionDays: 30 },
  ).rows;
/** A source without hot leaves, so every variant writes the same six columns (set below, once the database exists). */
let table = '';
let T = '';
const COLUMNS = '(id, "timestamp", event_message, project, metadata, body)';
const json = (v: unknown) => (v === null ? null : JSON.stringify(v));
const esc = (v: string | null) =>
  v === null ? '\\N' : v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');

const variants: Record<string, (c: pg.PoolClient, rows: LogRow[]) => Promise<unknown>> = {
  'copyRows (in use on Postgres)': (c, rows) => copyRows(c, table, rows),
  'jsonb_to_recordset (in use on PGlite)': (c, rows) => insertRows(c, table, rows),
  'unnest of six arrays, $5::jsonb[]': (c, rows) =>
    c.query(
      `INSERT INTO ${T} ${COLUMNS} SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[])`,
      [
        rows.map((r) => r.id),
        rows.map((r) => microsToIso(r.micros)),
        rows.map((r) => r.event_message),
        rows.map((r) => r.project),
        rows.map((r) => json(r.metadata)),
        rows.map((r) => json(r.body)),
      ],
    ),
  json_to_recordset: (c, rows) =>
    c.query(
      `INSERT INTO ${T} ${COLUMNS} SELECT i, t, e, p, m, b FROM json_to_recordset($1::json) AS r(i text, t timestamptz, e text, p text, m jsonb, b jsonb)`,
      [
        JSON.stringify(
          rows.map((r) => ({ i: r.id, t: microsToIso(r.micros), e: r.event_message, p: r.project, m: r.metadata, b: r.body })),
        ),
      ],
    ),
  'multi-row VALUES (6,000 parameters)': (c, rows) => {
    const params: unknown[] = [];
    const tuples = rows.map((r, i) => {
      params.push(r.id, microsToIso(r.micros), r.event_message, r.project, json(r.metadata), json(r.body));
      const o = i * 6;
      return `($${o + 1}, $${o + 2}::timestamptz, $${o + 3}, $${o + 4}, $${o + 5}::jsonb, $${o + 6}::jsonb)`;
    });
    return c.query(`INSERT INTO ${T} ${COLUMNS} VALUES ${tuples.join(', ')}`, params);
  },
  'COPY FROM STDIN (text, one string)': (c, rows) => {
    const text = rows
      .map(
        (r) =>
          [esc(r.id), microsToIso(r.micros), esc(r.event_message), esc(r.project), esc(json(r.metadata)), esc(json(r.body))].join('\t') +
          '\n',
      )
      .join('');
    return pipeline(Readable.from([text]), c.query(copyFrom(`COPY ${T} ${COLUMNS} FROM STDIN`)));
  },
};

const { url, name } = await createEmptyDatabase('lq_bench_insert');
const ctx = await createContext(testConfig(url), createLogger('silent'));
table = (await ctx.sources.create({ name: 'bench.insert.variants' })).table_name;
T = `logs.${table}`;
const client = await ctx.db.pool.connect();
/** CPU seconds used so far by this connection's backend (local server: /proc; NaN otherwise). */
const backendPid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
const backendCpu = (): number => {
  try {
    const fields = readFileSync(`/proc/${backendPid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
};
try {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const nodeCpu: Record<string, number> = Object.fromEntries(Object.keys(variants).map((k) => [k, 0]));
  const pgCpu: Record<string, number> = Object.fromEntries(Object.keys(variants).map((k) => [k, 0]));
  for (const [, run] of Object.entries(variants)) await run(client, batch()); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    const names = Object.keys(variants);
    for (let k = 0; k < names.length; k++) {
      const label = names[(k + round) % names.length];
      const rows = batch();
      const cpuStart = process.cpuUsage();
      const pgStart = backendCpu();
      const start = performance.now();
      await variants[label](client, rows);
      times[label].push(performance.now() - start);
      const cpu = process.cpuUsage(cpuStart);
      nodeCpu[label] += (cpu.user + cpu.system) / 1000;
      pgCpu[label] += (backendCpu() - pgStart) * 1000;
    }
  }
  for (const [label, t] of Object.entries(times)) {
    t.sort((a, b) => a - b);
    console.log(
      `${label.padEnd(38)} ${t[t.length >> 1].toFixed(1).padStart(7)} ms per 1,000 rows (median of ${ROUNDS}); ` +
        `CPU per 1,000 rows, mean: Node ${(nodeCpu[label] / ROUNDS).toFixed(0)} ms, Postgres ${(pgCpu[label] / ROUNDS).toFixed(0)} ms`,
    );
  }
} finally {
  client.release();
  await ctx.close();
  await dropDatabase(name);
}
